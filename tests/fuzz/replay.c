/* replay.c — a main() for the fuzz harnesses without libFuzzer: feeds every file named on the
 * command line (or every file in a folder named there) to LLVMFuzzerTestOneInput once. The
 * Makefile links each harness with it as build/tests/fz_NAME.replay, built with the ordinary
 * compiler (and SANITIZE's sanitizers), and t_fuzz_replay.sh runs the seed corpora and the
 * regression inputs (tests/fuzz/regress/NAME/: every crash the fuzzers found) through it in
 * `make check`. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int one(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: cannot open %s\n", path);
		return -1;
	}
	size_t cap = 1 << 16, n = 0, got;
	uint8_t *buf = malloc(cap);
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			uint8_t *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				buf = NULL;
			}
			buf = nb;
		}
	}
	fclose(f);
	if (!buf)
		return -1;
	/* an exact-size copy, so ASan sees a read past the input as libFuzzer would */
	uint8_t *exact = malloc(n ? n : 1);
	memcpy(exact, buf, n);
	free(buf);
	LLVMFuzzerTestOneInput(exact, n);
	free(exact);
	return 0;
}

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
	int count = 0, bad = 0;
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st)) {
			fprintf(stderr, "replay: no such file or folder %s\n", argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			bad |= one(argv[i]);
			count++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *e;
		char **names = NULL;
		int n = 0;
		while (d && (e = readdir(d)))
			if (e->d_name[0] != '.') {
				names = realloc(names, (size_t)(n + 1) * sizeof *names);
				names[n] = malloc(strlen(argv[i]) + strlen(e->d_name) + 2);
				sprintf(names[n++], "%s/%s", argv[i], e->d_name);
			}
		if (d)
			closedir(d);
		qsort(names, (size_t)n, sizeof *names, cmp);
		for (int k = 0; k < n; k++) {
			bad |= one(names[k]);
			count++;
			free(names[k]);
		}
		free(names);
	}
	printf("replay: %d inputs\n", count);
	return bad ? 1 : 0;
}
