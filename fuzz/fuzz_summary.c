/*
 * fuzz_summary.c - libFuzzer target for what `memprov merge` reads: the
 * input as a file of summaries (one JSON object, or one per line), read
 * by merge_read_file through a memfd, then the merged report printed as
 * text and as JSON (to /dev/null). Covers the JSON reader (json_read.c)
 * and the reduce step (merge.c) on hostile text.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "merge.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct merge m = { 0 };
	char path[64];
	size_t count = 0;
	FILE *devnull;
	int fd = memfd_create("summary", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	devnull = fopen("/dev/null", "w");
	if (devnull) {
		m.per_process = devnull;
		if (merge_read_file(&m, path, &count) == 0) {
			merge_print(&m, devnull, count);
			merge_print_json(&m, devnull, count);
		}
		fclose(devnull);
	}
	merge_release(&m);
	close(fd);
	return 0;
}
