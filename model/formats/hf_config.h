/* hf_config.h — config.json: a gb_config (config.h) in the field names of its family, as
 * Hugging Face writes GPT-2's and Llama's, with a "glassbox" object for what a family has no
 * field for. model/README.md documents every field. */
#ifndef GLASSBOX_HF_CONFIG_H
#define GLASSBOX_HF_CONFIG_H

#include "model/config.h"
#include "model/err.h"

/* Parses config.json text; checks every field's range. path names the file in messages. */
int gb_config_parse(gb_config *c, const char *json, const char *path, gb_err *err);
int gb_config_load(gb_config *c, const char *path, gb_err *err);

/* Serializes in the family's field names (plus the "glassbox" object); returns malloc'd text. */
char *gb_config_to_json(const gb_config *c);

#endif
