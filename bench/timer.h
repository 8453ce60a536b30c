/* timer.h - the `timer` benchmark: cost of a serialized TSC read, per serialization method. */
#ifndef PMB_TIMER_H
#define PMB_TIMER_H

void bench_timer(void);

#endif
