/* fileio.c — see fileio.h. */
#include "model/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

char *gb_read_file(const char *path, size_t max, size_t *len, gb_err *err)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		gb_fail(err, "%s: cannot open (%s)", path, strerror(errno));
		return NULL;
	}
	char *buf = NULL;
	size_t n = 0, cap = 0, got;
	for (;;) {
		if (n + 65536 + 1 > cap) {
			cap = cap ? cap * 2 : 65536 * 2;
			char *nb = realloc(buf, cap);
			if (!nb) {
				gb_fail(err, "%s: out of memory", path);
				goto fail;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, 65536, f);
		n += got;
		if (n > max) {
			gb_fail(err, "%s: larger than %zu bytes", path, max);
			goto fail;
		}
		if (got < 65536)
			break;
	}
	if (ferror(f)) {
		gb_fail(err, "%s: read error (%s)", path, strerror(errno));
		goto fail;
	}
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
fail:
	free(buf);
	fclose(f);
	return NULL;
}

static int file_begin(gb_file *w, const char *path, int keep, gb_err *err)
{
	static unsigned counter;
	struct stat st;
	int fd = -1;
	w->f = NULL;
	w->keep = keep;
	if (strlen(path) >= sizeof w->path)
		return gb_fail(err, "%s: path too long", path);
	if (keep && lstat(path, &st) == 0)
		return gb_fail(err, "%s: already exists: choose another name, or add --force to overwrite it", path);
	strcpy(w->path, path);
	/* a new name each try, created exclusively: a file or symlink planted under the name is
	 * never written through */
	for (int tries = 0; tries < 100 && fd < 0; tries++) {
		snprintf(w->tmp, sizeof w->tmp, "%s.tmp.%ld.%u", path, (long)getpid(), counter++);
		fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0)
		return gb_fail(err, "%s: cannot write (%s)", path, strerror(errno));
	w->f = fdopen(fd, "wb");
	if (!w->f) {
		int e = errno;
		close(fd);
		unlink(w->tmp);
		return gb_fail(err, "%s: cannot write (%s)", path, strerror(e));
	}
	return 0;
}

int gb_file_begin(gb_file *w, const char *path, gb_err *err) { return file_begin(w, path, 0, err); }
int gb_file_begin_new(gb_file *w, const char *path, gb_err *err) { return file_begin(w, path, 1, err); }

int gb_file_commit(gb_file *w, gb_err *err)
{
	int bad = ferror(w->f);
	if (fflush(w->f) || fsync(fileno(w->f)))
		bad = 1;
	if (fclose(w->f))
		bad = 1;
	w->f = NULL;
	if (bad) {
		int e = errno;
		unlink(w->tmp);
		return gb_fail(err, "%s: write failed (%s)", w->path, strerror(e ? e : EIO));
	}
	if (w->keep) {
		/* link, unlike rename, refuses to replace a file created since begin */
		if (link(w->tmp, w->path) == 0) {
			unlink(w->tmp);
			return 0;
		}
		int e = errno;
		struct stat st;
		if (e == EEXIST || lstat(w->path, &st) == 0) {
			unlink(w->tmp);
			return gb_fail(err, "%s: already exists: choose another name, or add --force to overwrite it", w->path);
		}
		/* a file system without hard links (FAT): checked just above, so rename */
	}
	if (rename(w->tmp, w->path)) {
		int e = errno;
		unlink(w->tmp);
		return gb_fail(err, "%s: cannot rename into place (%s)", w->path, strerror(e));
	}
	return 0;
}

void gb_file_abort(gb_file *w)
{
	if (w->f)
		fclose(w->f);
	w->f = NULL;
	unlink(w->tmp);
}

int gb_write_file(const char *path, const void *data, size_t len, gb_err *err)
{
	gb_file w;
	if (gb_file_begin(&w, path, err))
		return -1;
	if (len && fwrite(data, 1, len, w.f) != len) {
		gb_file_abort(&w);
		return gb_fail(err, "%s: write failed (%s)", path, strerror(errno));
	}
	return gb_file_commit(&w, err);
}

int gb_map_file(gb_map *m, const char *path, gb_err *err)
{
	m->data = NULL;
	m->len = 0;
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return gb_fail(err, "%s: cannot open (%s)", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return gb_fail(err, "%s: not a regular file", path);
	}
	if (st.st_size == 0) {
		close(fd);
		return gb_fail(err, "%s: empty file", path);
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return gb_fail(err, "%s: cannot map (%s)", path, strerror(errno));
	m->data = p;
	m->len = (size_t)st.st_size;
	return 0;
}

void *gb_big_alloc(size_t bytes)
{
	const size_t huge = (size_t)2 << 20;
	if (bytes < 2 * huge)
		return aligned_alloc(64, (bytes + 63) / 64 * 64);
	bytes = (bytes + huge - 1) / huge * huge;
	void *p = aligned_alloc(huge, bytes);
#ifdef MADV_HUGEPAGE
	if (p)
		madvise(p, bytes, MADV_HUGEPAGE); /* a hint: without it, ordinary pages */
#endif
	return p;
}

void gb_map_drop(const gb_map *m, const void *p, size_t n)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), a = (uintptr_t)p, b = a + n;
	if (!m->data || !page || a < (uintptr_t)m->data || b > (uintptr_t)m->data + m->len)
		return;
	a = (a + page - 1) / page * page;
	b = b / page * page;
	if (a < b)
		madvise((void *)a, b - a, MADV_DONTNEED); /* a hint: failing changes nothing */
}

void gb_map_copy(const gb_map *m, void *dst, const void *src, size_t n)
{
	const size_t piece = (size_t)4 << 20;
	for (size_t at = 0; at < n; at += piece) {
		size_t len = n - at < piece ? n - at : piece;
		memcpy((char *)dst + at, (const char *)src + at, len);
		gb_map_drop(m, (const char *)src + at, len);
	}
}

void gb_unmap(gb_map *m)
{
	if (m->data)
		munmap((void *)m->data, m->len);
	m->data = NULL;
	m->len = 0;
}
