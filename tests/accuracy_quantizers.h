/* SPDX-License-Identifier: MIT */
/* accuracy_quantizers.c: the block quantizers accuracy_dot stores its
   weights with. Each writes one block of its format into b (zeroed by the
   caller) from the block's values v. */
#ifndef DN_TEST_ACCURACY_QUANTIZERS_H
#define DN_TEST_ACCURACY_QUANTIZERS_H

#include <stdint.h>

/* the largest |v[i]| of n values */
double absmax(const float *v, int n);

void put_q4_0(const float *v, uint8_t *b);
void put_q4_1(const float *v, uint8_t *b);
void put_q5_0(const float *v, uint8_t *b);
void put_q5_1(const float *v, uint8_t *b);
void put_q8_0(const float *v, uint8_t *b);
void put_iq4_nl(const float *v, uint8_t *b);
void put_q2_k(const float *v, uint8_t *b);
void put_q3_k(const float *v, uint8_t *b);
void put_q4_k(const float *v, uint8_t *b);
void put_q5_k(const float *v, uint8_t *b);
void put_q6_k(const float *v, uint8_t *b);
void put_iq4_xs(const float *v, uint8_t *b);

#endif
