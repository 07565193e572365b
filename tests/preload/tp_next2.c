/* tp_next2.c -- libtpnext2.so: the "next" definitions (see tp_next1.c). */
int tp_next_which(void);
int cuTpNextWhich(void);

int
tp_next_which(void)
{
	return 2;
}

int
cuTpNextWhich(void)
{
	return 2;
}
