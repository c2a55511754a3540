# The soak's samples as a picture: gnuplot -e "data='benches/data/soak-100000x16.csv'; out='benches/data/soak-100000x16.png'" benches/soak-plot.gp
# (gnuplot from Debian's gnuplot-nox). Columns: t,calls,rss_kib,fds,threads,children.
set datafile separator ","
set terminal pngcairo size 1000,600 font ",11"
set output out
set multiplot layout 2,1 title "agent-bash mcp: 100,000 calls, 16 at once, through the official client"
set key top left
set xlabel "seconds"
set ylabel "MiB"
set yrange [0:*]
plot data using 1:($3/1024) every ::1 with lines lw 2 title "server RSS"
set ylabel "count"
set yrange [0:130]
set key top left horizontal
plot data using 1:4 every ::1 with lines title "descriptors", \
     data using 1:5 every ::1 with lines title "threads", \
     data using 1:6 every ::1 with lines title "descendants"
unset multiplot
