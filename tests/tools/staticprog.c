/* staticprog.c -- a statically linked program: LD_PRELOAD cannot load the
 * shim into it, so cuwarden-audit must fail (125), never pass. */
int
main(void)
{
	return 0;
}
