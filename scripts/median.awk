# The median of the numbers on standard input, one a line, sorted
# (sort -n | awk -f scripts/median.awk): the benchmark scripts' rounds.
# With -v stats=1 it prints the largest, the median and the mean.
{ a[NR] = $1; s += $1 }
END {
	m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
	if (stats) print a[NR], m, s / NR
	else print m
}
