/*
 * consumer.c -- built by CMake against an installed cuwarden
 * (tests/tools/cmake/CMakeLists.txt): device memory through the public
 * API, a round trip of bytes, the memory freed, the statistics saying so.
 */
#include <stdio.h>
#include <string.h>

#include <cuwarden.h>

int
main(void)
{
	unsigned char in[256], out[256];
	cw_buf_t b;
	cw_stats_t st;
	int rc;

	memset(in, 0xa5, sizeof(in));
	if ((rc = cw_alloc(&b, sizeof(in), CW_DEVICE, 0, CW_OWNER_NONE)) !=
	    CW_OK ||
	    (rc = cw_upload(b, 0, in, sizeof(in))) != CW_OK ||
	    (rc = cw_download(b, 0, out, sizeof(out))) != CW_OK ||
	    (rc = cw_free(b)) != CW_OK ||
	    (rc = cw_stats(&st)) != CW_OK) {
		fprintf(stderr, "consumer: %s\n", cw_strerror(rc));
		return 1;
	}
	if (memcmp(in, out, sizeof(in)) != 0) {
		fprintf(stderr, "consumer: the bytes came back changed\n");
		return 1;
	}
	if (st.allocations[CW_DEVICE].total != 1 ||
	    st.bytes[CW_DEVICE].current != 0) {
		fprintf(stderr, "consumer: cw_stats counts %llu allocations, "
		    "%llu bytes live\n",
		    (unsigned long long)st.allocations[CW_DEVICE].total,
		    (unsigned long long)st.bytes[CW_DEVICE].current);
		return 1;
	}
	printf("consumer: ok\n");
	return 0;
}
