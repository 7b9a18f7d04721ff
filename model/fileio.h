/* fileio.h — whole-file reads, atomic writes (a temporary name, then rename), read-only maps.
 * Every writer in glassbox goes through gb_file_begin/commit so an interrupted write never
 * leaves half a file under the real name. */
#ifndef GLASSBOX_FILEIO_H
#define GLASSBOX_FILEIO_H

#include <stddef.h>
#include <stdio.h>

#include "model/err.h"

/* Reads a whole file into a NUL-terminated malloc'd buffer; *len gets its size (may be NULL).
 * Files larger than max bytes are refused. */
char *gb_read_file(const char *path, size_t max, size_t *len, gb_err *err);

/* Atomic writing: begin creates "<path>.tmp.<pid>.<n>" exclusively (O_EXCL, never through a
 * planted file or symlink of that name); commit closes it, checks every write succeeded and
 * renames it onto path; abort closes and removes it. gb_file_begin_new refuses a path that
 * exists ("... already exists: ... --force"), at begin and again at commit (a link, which
 * unlike rename never replaces a file made in between). */
typedef struct gb_file {
	FILE *f;
	int keep; /* commit refuses to replace an existing path */
	char path[4096];
	char tmp[4200];
} gb_file;

int gb_file_begin(gb_file *w, const char *path, gb_err *err);
int gb_file_begin_new(gb_file *w, const char *path, gb_err *err);
int gb_file_commit(gb_file *w, gb_err *err);
void gb_file_abort(gb_file *w);

/* Writes len bytes atomically. */
int gb_write_file(const char *path, const void *data, size_t len, gb_err *err);

/* A read-only memory map of a whole file. */
typedef struct gb_map {
	const unsigned char *data;
	size_t len;
} gb_map;

int gb_map_file(gb_map *m, const char *path, gb_err *err);
void gb_unmap(gb_map *m);

/* Memory for a large buffer that the kernels stream (owned weights, the bench's probe), on a
 * 64-byte boundary; from 4 MB up on a 2 MB boundary and marked for transparent huge pages
 * (madvise, which Debian's default "madvise" setting honours): one TLB entry per 2 MB instead
 * of per 4 KB. NULL when out of memory; free() releases it. */
void *gb_big_alloc(size_t bytes);

/* Gives back the whole pages of the map inside [p, p + n), which a copy has replaced: the file
 * stays mapped, but the process no longer holds those pages (copied weights are not counted
 * twice). Nothing when the range is not inside the map. */
void gb_map_drop(const gb_map *m, const void *p, size_t n);

/* memcpy of n bytes from src, inside m, to dst, 4 MB at a time, each piece's pages given back
 * as soon as it is copied: the process never holds a large tensor twice. */
void gb_map_copy(const gb_map *m, void *dst, const void *src, size_t n);

#endif
