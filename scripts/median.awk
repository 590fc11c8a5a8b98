# The median of the numbers on standard input, one a line, sorted
# (sort -n | awk -f scripts/median.awk): the benchmark scripts' rounds.
# With -v stats=1 it prints the largest, the median and the mean; with
# -v quartiles=1 the first quartile, the median and the third quartile
# (interpolated between neighbours, as the median of an even count is).
{ a[NR] = $1; s += $1 }
function q(p,  i) { i = 1 + p * (NR - 1); return a[int(i)] + (i - int(i)) * (a[int(i) + 1] - a[int(i)]) }
END {
	m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
	if (stats) print a[NR], m, s / NR
	else if (quartiles) print q(0.25), m, q(0.75)
	else print m
}
