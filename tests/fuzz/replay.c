/* SPDX-License-Identifier: ISC */

/*
 * Run a fuzz target over the files of its corpus without libFuzzer, so
 * that the committed corpus is a regression test in every make check
 * (under the sanitizers of that build).  Prints TAP, one line per file.
 */

#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static int
replay(const char *path)
{
	FILE		*f;
	struct stat	 st;
	uint8_t		*data;
	size_t		 n;

	if ((f = fopen(path, "rb")) == NULL || fstat(fileno(f), &st) == -1)
		return (-1);
	if ((data = malloc(st.st_size + 1)) == NULL) {
		fclose(f);
		return (-1);
	}
	n = fread(data, 1, st.st_size, f);
	fclose(f);
	LLVMFuzzerTestOneInput(data, n);	/* aborts on a broken invariant */
	free(data);
	return (0);
}

int
main(int argc, char *argv[])
{
	struct dirent	**names;
	char		  path[4096];
	int		  i, n, count = 0, failed = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS-DIR\n", argv[0]);
		return (2);
	}
	if ((n = scandir(argv[1], &names, NULL, alphasort)) == -1) {
		printf("1..0 # SKIP no corpus at %s\n", argv[1]);
		return (0);
	}
	for (i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", argv[1],
			    names[i]->d_name);
			if (replay(path) == -1) {
				printf("not ok %d - %s unreadable\n", ++count,
				    names[i]->d_name);
				failed++;
			} else
				printf("ok %d - %s\n", ++count,
				    names[i]->d_name);
		}
		free(names[i]);
	}
	free(names);
	printf("1..%d\n", count);
	return (failed != 0);
}
