/* bench_viz.h — `glassbox bench`: how long the terminal backend takes to draw a figure. */
#ifndef GLASSBOX_BENCH_VIZ_H
#define GLASSBOX_BENCH_VIZ_H

#include <stdio.h>

/* Prints the time to lay out a 128x128 heatmap in terminal cells and write it as truecolor
 * text (the whole figure in a 160x80 grid with half blocks, and a window of it in 80x24), best
 * of many runs; the budget is 5 ms. Returns 0, or -1 when memory runs out. */
int bench_cells(FILE *out);

#endif
