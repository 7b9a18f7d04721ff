/* fuzz.h — what the libFuzzer harnesses of tests/fuzz share: a private folder for the files
 * they hand to the program's loaders (each harness calls the library function glassbox itself
 * uses, which reads a path), and writing the input there. tests/fuzz/README.md says how to
 * build and run them. */
#ifndef GLASSBOX_FUZZ_H
#define GLASSBOX_FUZZ_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fz_dir_path[256];

/* Removes the folder and what the harness wrote in it, at exit. */
static void fz_cleanup(void)
{
	DIR *d = opendir(fz_dir_path);
	struct dirent *e;
	char p[600];
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(p, sizeof p, "%s/%s", fz_dir_path, e->d_name);
			unlink(p);
		}
	if (d)
		closedir(d);
	rmdir(fz_dir_path);
}

/* A folder of this process's own (in /dev/shm when it is there: no disk writes per input). */
static inline const char *fz_dir(void)
{
	char *dir = fz_dir_path;
	if (!dir[0]) {
		const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		snprintf(dir, sizeof fz_dir_path, "%s/gbfuzz.XXXXXX", base);
		if (!mkdtemp(dir))
			abort();
		atexit(fz_cleanup);
	}
	return dir;
}

/* dir/name, written into buf. */
static inline const char *fz_path(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%s/%s", fz_dir(), name);
	return buf;
}

/* Writes n bytes to path (made by fz_path). */
static inline void fz_write(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f))
		abort();
}

/* A NUL-terminated copy of the input. */
static inline char *fz_text(const uint8_t *data, size_t n)
{
	char *s = malloc(n + 1);
	if (!s)
		abort();
	memcpy(s, data, n);
	s[n] = 0;
	return s;
}

/* The input split at its first NUL byte (b is empty when there is none). */
static inline void fz_split(const uint8_t *data, size_t n, const uint8_t **b, size_t *nb, size_t *na)
{
	const uint8_t *z = memchr(data, 0, n);
	*na = z ? (size_t)(z - data) : n;
	*b = z ? z + 1 : data + n;
	*nb = z ? n - *na - 1 : 0;
}

#endif
