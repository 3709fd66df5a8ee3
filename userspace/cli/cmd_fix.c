// SPDX-License-Identifier: MIT
/*
 * cmd_fix.c - `ctrace-bpf fix FILE [-o OUT]`: closes a trace that was cut
 * short (tracer killed, disk full) so that viewers open it. The repair itself
 * is trace_fix.c; this is the command line and the file handling.
 *
 * In place, the repaired trace is written to a temporary file next to FILE
 * and renamed over it: a crash or a full disk during the repair leaves FILE
 * as it was. The same rules as for the trace's output apply, since this too
 * may run as root: no writing through a symbolic link, nor over a file of
 * another user.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli/commands.h"
#include "io/gzip_input.h"
#include "encode/json/json_writer.h"
#include "io/output_file.h"
#include "encode/perfetto/pftrace.h"
#include "lib/sudo_user.h"
#include "offline/trace_fix.h"
#include "io/trace_sink.h"

static const char usage_text[] =
	"Usage: ctrace-bpf fix FILE [-o OUT]\n"
	"\n"
	"Repairs a trace that was cut short (ctrace-bpf was killed, the disk was full):\n"
	"keeps every complete event, drops the cut-off rest, and closes the file with\n"
	"metadata saying \"truncated\": true and how many events were recovered.\n"
	"FILE is rewritten in place (through a temporary file), or the result goes to\n"
	"OUT (- for standard output). A trace that is already complete is left alone.\n"
	"FILE may be gzip-compressed (FILE.json.gz, cut or whole): repaired in place,\n"
	"it stays gzip; OUT is gzip when its name ends in .gz.\n"
	"\n"
	"  -o, --output OUT   write the repaired trace here instead\n"
	"  -h, --help         this text\n";

static void say_result(const char *file, const char *out, const struct trace_fix_result *r)
{
	fprintf(stderr, "ctrace-bpf: repaired %s%s%s: kept %llu events%s; removed %llu bytes (the cut-off tail, damaged lines, the old end and anything after it)",
		file, out ? " into " : "", out ? (strcmp(out, "-") ? out : "standard output") : "",
		(unsigned long long)r->events,
		r->context_kept ? " and the context" : " (the context was cut: not kept)",
		(unsigned long long)r->bytes_dropped);
	if (r->damaged_lines)
		fprintf(stderr, ", %llu damaged lines", (unsigned long long)r->damaged_lines);
	fputs(". Open it in Perfetto UI (https://ui.perfetto.dev) or chrome://tracing\n", stderr);
}

/* One line about a failed repair; 1 (the exit code). */
static int say_failure(const char *file, const struct trace_fix_result *r)
{
	switch (r->status) {
	case TRACE_FIX_NOT_OURS:
		fprintf(stderr, "ctrace-bpf: cannot repair %s: %s\n", file, r->why);
		break;
	case TRACE_FIX_READ_ERROR:
		fprintf(stderr, "ctrace-bpf: reading %s failed: %s\n", file, strerror(r->err));
		break;
	case TRACE_FIX_WRITE_ERROR:
		fprintf(stderr, "ctrace-bpf: writing the repaired %s failed: %s; %s is unchanged\n",
			file, strerror(r->err), file);
		break;
	default:
		break;
	}
	return 1;
}

/* Copies the whole of in to out_fd (a complete trace given -o), gzip-compressed with gzip_out. */
static int copy_all(FILE *in, int out_fd, bool gzip_out)
{
	struct json_writer w;
	char buf[65536];
	size_t n;
	int ret;

	if (jw_init(&w, out_fd, 0) < 0 || (gzip_out && jw_gzip(&w) < 0)) {
		jw_free(&w);
		errno = ENOMEM;
		return -1;
	}
	rewind(in);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		jw_raw(&w, buf, n);
	ret = jw_finish(&w) < 0 || ferror(in) ? -1 : 0;
	if (w.err)
		errno = w.err;
	jw_free(&w);
	return ret;
}

/* A seekable copy of a stream that is not (a pipe); closes in. NULL on error. */
static FILE *spool(FILE *in)
{
	FILE *copy = tmpfile();
	char buf[65536];
	size_t n;

	while (copy && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, copy) != n) {
			fclose(copy);
			copy = NULL;
		}
	if (copy && (ferror(in) || fflush(copy) != 0)) {
		fclose(copy);
		copy = NULL;
	}
	fclose(in);
	if (copy)
		rewind(copy);
	return copy;
}

static int fix_to(const char *file, const char *out)
{
	struct trace_fix_result r;
	struct stat in_st, out_st;
	FILE *in = fopen(file, "re");
	int out_fd = -1, null_fd = -1, ret = 1;
	bool created = false, gzip_in, gzip_out = strcmp(out, "-") && trace_sink_path_is_gzip(out);

	if (!in) {
		fprintf(stderr, "ctrace-bpf: cannot read %s: %s\n", file, strerror(errno));
		return 1;
	}
	/* Two passes need to read FILE twice: a pipe is kept in a temporary file first. */
	if (lseek(fileno(in), 0, SEEK_CUR) < 0 && !(in = spool(in))) {
		fprintf(stderr, "ctrace-bpf: cannot keep a copy of %s to read it twice: %s\n", file, strerror(errno));
		return 1;
	}
	/* Opening OUT truncates it: it must not be FILE itself. */
	if (strcmp(out, "-") && stat(out, &out_st) == 0 && fstat(fileno(in), &in_st) == 0 &&
	    in_st.st_dev == out_st.st_dev && in_st.st_ino == out_st.st_ino) {
		fprintf(stderr, "ctrace-bpf: %s and %s are the same file; leave out -o to repair it in place\n",
			file, out);
		fclose(in);
		return 1;
	}
	in = gzip_input_open(in, &gzip_in);
	if (!in) {
		fprintf(stderr, "ctrace-bpf: cannot read %s: %s\n", file, strerror(errno));
		return 1;
	}
	/*
	 * A first pass decides, writing nothing: OUT may be a pipe, where what
	 * was written for a trace found complete at its end cannot be taken back.
	 */
	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null_fd < 0 || trace_fix(in, null_fd, &r) == TRACE_FIX_WRITE_ERROR) {
		fprintf(stderr, "ctrace-bpf: cannot open /dev/null: %s\n", strerror(errno));
		goto out;
	}
	if (r.status != TRACE_FIX_REPAIRED && r.status != TRACE_FIX_COMPLETE) {
		say_failure(file, &r);
		goto out;
	}
	out_fd = output_open(out, &created);
	if (out_fd < 0)
		goto out;
	rewind(in);
	if (r.status == TRACE_FIX_COMPLETE) {
		if (copy_all(in, out_fd, gzip_out) < 0)
			fprintf(stderr, "ctrace-bpf: copying %s to %s failed: %s\n", file, out, strerror(errno));
		else
			ret = 0;
		if (ret == 0)
			fprintf(stderr, "ctrace-bpf: %s is complete, nothing to repair; copied it unchanged to %s\n",
				file, out);
	} else if (trace_fix_to(in, out_fd, gzip_out, &r) == TRACE_FIX_REPAIRED) {
		say_result(file, out, &r);
		ret = 0;
	} else {
		say_failure(file, &r);
	}
	if (out_fd >= 0 && close(out_fd) != 0 && ret == 0) {
		fprintf(stderr, "ctrace-bpf: writing %s failed: %s\n", out, strerror(errno));
		ret = 1;
	}
	/* Never leave a half-written OUT behind that looks like a trace. */
	if (out_fd >= 0 && ret != 0 && strcmp(out, "-") && stat(out, &out_st) == 0 &&
	    S_ISREG(out_st.st_mode) && (created || out_st.st_size > 0))
		unlink(out);
out:
	if (null_fd >= 0)
		close(null_fd);
	fclose(in);
	return ret;
}

/*
 * False when a process still has the file open for writing: the tracer is
 * still running, and a repair now would be overwritten (a read lease is
 * granted only when no one has it open for writing). Undecided -> true.
 */
static bool nobody_writing(int fd)
{
	if (fcntl(fd, F_SETLEASE, F_RDLCK) == 0) {
		fcntl(fd, F_SETLEASE, F_UNLCK);
		return true;
	}
	return errno != EAGAIN;
}

static int fix_in_place(const char *file)
{
	struct trace_fix_result r;
	struct stat st, fst;
	char *tmp = NULL, *slash;
	FILE *in = NULL;
	int fd = -1, tmp_fd = -1, ret = 1;
	bool gzip_in;

	if (lstat(file, &st) != 0) {
		fprintf(stderr, "ctrace-bpf: cannot read %s: %s\n", file, strerror(errno));
		return 1;
	}
	if (S_ISLNK(st.st_mode)) {
		fprintf(stderr, "ctrace-bpf: will not rewrite %s: it is a symbolic link; give the file it points to, or -o OUT\n",
			file);
		return 1;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "ctrace-bpf: %s is not a regular file; give -o OUT to write the repaired trace elsewhere\n",
			file);
		return 1;
	}
	if (st.st_uid != sudo_user_owner()) {
		fprintf(stderr, "ctrace-bpf: will not rewrite %s: it belongs to another user (uid %u); give -o OUT\n",
			file, (unsigned)st.st_uid);
		return 1;
	}
	fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	/* The file checked above must be the file opened. */
	if (fd < 0 || fstat(fd, &fst) != 0 || fst.st_ino != st.st_ino || fst.st_dev != st.st_dev) {
		fprintf(stderr, "ctrace-bpf: cannot read %s: %s\n", file,
			fd < 0 ? strerror(errno) : "it changed while being opened");
		goto out;
	}
	if (!nobody_writing(fd)) {
		fprintf(stderr, "ctrace-bpf: %s is still open for writing (is ctrace-bpf still tracing into it?);"
			" stop the tracer first\n", file);
		goto out;
	}
	in = fdopen(fd, "r");
	if (!in)
		goto out;
	fd = -1;
	/* A .json.gz is read through zlib, and repaired into gzip again. */
	in = gzip_input_open(in, &gzip_in);
	if (!in) {
		fprintf(stderr, "ctrace-bpf: cannot read %s: %s\n", file, strerror(errno));
		goto out;
	}

	/* The temporary file goes next to FILE: rename() cannot cross file systems. */
	slash = strrchr(file, '/');
	if (asprintf(&tmp, "%.*s.ctrace-fix-XXXXXX", slash ? (int)(slash - file + 1) : 0, file) < 0) {
		tmp = NULL;
		goto out;
	}
	tmp_fd = mkostemp(tmp, O_CLOEXEC);
	if (tmp_fd < 0) {
		fprintf(stderr, "ctrace-bpf: cannot repair %s: cannot create a file next to it: %s;"
			" give -o OUT\n", file, strerror(errno));
		free(tmp);
		tmp = NULL;
		goto out;
	}
	switch (trace_fix_to(in, tmp_fd, gzip_in, &r)) {
	case TRACE_FIX_REPAIRED:
		/* The repaired file keeps the original's owner and mode. */
		if (fchmod(tmp_fd, st.st_mode & 07777) != 0 ||
		    (geteuid() == 0 && fchown(tmp_fd, st.st_uid, st.st_gid) != 0) ||
		    fsync(tmp_fd) != 0) {
			r.err = errno;
			r.status = TRACE_FIX_WRITE_ERROR;
			say_failure(file, &r);
			break;
		}
		if (rename(tmp, file) != 0) {
			fprintf(stderr, "ctrace-bpf: cannot replace %s: %s; it is unchanged\n", file, strerror(errno));
			break;
		}
		free(tmp);
		tmp = NULL; /* renamed: nothing to remove */
		say_result(file, NULL, &r);
		ret = 0;
		break;
	case TRACE_FIX_COMPLETE:
		fprintf(stderr, "ctrace-bpf: %s is complete, nothing to repair; left it as it is\n", file);
		ret = 0;
		break;
	default:
		say_failure(file, &r);
		break;
	}
out:
	if (tmp_fd >= 0)
		close(tmp_fd);
	if (tmp)
		unlink(tmp);
	free(tmp);
	if (in)
		fclose(in);
	if (fd >= 0)
		close(fd);
	return ret;
}

/* A .pftrace (pftrace.h): not JSON, and written whole packets at a time: opens as it is, even cut. */
static bool is_pftrace(const char *file)
{
	unsigned char head[2];
	FILE *f = fopen(file, "re");
	bool yes = f && fread(head, 1, sizeof(head), f) == sizeof(head) && pftrace_looks_like(head, sizeof(head));

	if (f)
		fclose(f);
	return yes;
}

int cmd_fix(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *out = NULL;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fputs("ctrace-bpf: see ctrace-bpf fix --help\n", stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fputs(optind >= argc ? "ctrace-bpf: which trace? ctrace-bpf fix FILE [-o OUT]\n" :
				       "ctrace-bpf: fix takes one FILE; see ctrace-bpf fix --help\n",
		      stderr);
		return 2;
	}
	if (is_pftrace(argv[optind])) {
		fprintf(stderr, "ctrace-bpf: %s is a Perfetto protobuf trace (-o FILE.pftrace): it is written a whole packet at a time, so even cut short it opens as it is: there is nothing to repair\n",
			argv[optind]);
		return 1;
	}
	return out ? fix_to(argv[optind], out) : fix_in_place(argv[optind]);
}
