# median.awk -- med(list): the median of the numbers of a space-separated
# list (the mean of the middle two for an even count).  For the bench
# scripts that print each figure's median over rounds (run-bench-shim.sh,
# run-ab-timeline.sh): awk -f median.awk -f THEIRS.
function med(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
