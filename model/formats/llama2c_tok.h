/* llama2c_tok.h — llama2.c's tokenizer.bin and its encoder.
 *
 * The file: uint32 max_token_length, then for each of the model's vocab_size tokens a float32
 * score, an int32 length and that many bytes (the SentencePiece piece with "▁" written as a
 * space; BOS and EOS as "\n<s>\n" and "\n</s>\n"; the raw bytes as "<0x00>" .. "<0xFF>" at ids
 * 3 .. 258). The vocabulary size is not in the file: it is the model's.
 *
 * Encoding, as run.c's encode(): optionally BOS (id 1); then, for a non-empty text, the " "
 * piece (SentencePiece's dummy prefix); then each UTF-8 character (a lead byte and up to three
 * continuation bytes) as its piece when the vocabulary has it, else its bytes as the byte
 * pieces (id = byte + 3); then, repeatedly, the adjacent pair whose concatenation is a piece
 * with the highest score (the leftmost among equals; scores <= -1e10 never merge) is merged,
 * until no pair is a piece. Where two ids spell the same piece, the lower id is the piece.
 *
 * Decoding, as run.c's decode(): a piece "<0xNN>" is the byte NN; a piece right after BOS
 * loses its leading space; BOS and EOS themselves are not text and decode to nothing. Errors: 0 / -1 with a one-line message. */
#ifndef GLASSBOX_LLAMA2C_TOK_H
#define GLASSBOX_LLAMA2C_TOK_H

#include <stddef.h>

#include "model/err.h"

typedef struct gb_l2c_tok gb_l2c_tok;

/* Reads tokenizer.bin for a model of `vocab` tokens. The file must hold exactly that many. */
int gb_l2c_tok_load(const char *path, int vocab, gb_l2c_tok **out, gb_err *err);
void gb_l2c_tok_free(gb_l2c_tok *t);

int gb_l2c_tok_vocab_size(const gb_l2c_tok *t);

/* text (len bytes; a NUL byte ends it, as in run.c) to *ids (malloc'd, *n entries). bos/eos:
 * prepend 1 / append 2. Fails when the text needs a piece the vocabulary lacks (the " "
 * dummy prefix, or byte pieces for a character that is not a piece). */
int gb_l2c_tok_encode(const gb_l2c_tok *t, const char *text, size_t len, int bos, int eos, int **ids, int *n,
                      gb_err *err);

/* The bytes token id stands for ("<0xNN>" as the byte), NULL for an id out of range. */
const unsigned char *gb_l2c_tok_piece(const gb_l2c_tok *t, int id, size_t *len);

/* The piece exactly as the file spells it, and its score. */
const unsigned char *gb_l2c_tok_raw(const gb_l2c_tok *t, int id, size_t *len, float *score);

/* ids to text (malloc'd, NUL-terminated, *len bytes), run.c's rule for the space after BOS;
 * ids 1 and 2 (BOS, EOS) give no bytes. */
int gb_l2c_tok_decode(const gb_l2c_tok *t, const int *ids, int n, char **out, size_t *len, gb_err *err);

#endif
