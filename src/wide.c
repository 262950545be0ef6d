/* SPDX-License-Identifier: MIT */
/*
 * Exact 256-bit integers and their one rounding to binary32.
 *
 * dn_wide_to_f32 is the single place where an exact value (an integer times
 * a power of two) becomes an f32: IEEE round to nearest even onto the
 * binary32 grid (denormal grid included), then the FTZ rule.
 */
#include "wide.h"
#include "bits.h"

void dn_wide_set_i64(dn_wide *w, int64_t v)
{
    uint64_t fill = v < 0 ? UINT64_MAX : 0;
    w->limb[0] = (uint64_t)v;
    for (int i = 1; i < DN_WIDE_LIMBS; i++) w->limb[i] = fill;
}

void dn_wide_add_shifted(dn_wide *w, int64_t v, unsigned shift)
{
    /* |v| * 2^shift as limbs, then add or subtract it limb by limb. */
    uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    uint64_t t[DN_WIDE_LIMBS] = {0};
    unsigned limb = shift / 64, bit = shift % 64;
    t[limb] = mag << bit;
    if (bit != 0 && limb + 1 < DN_WIDE_LIMBS) t[limb + 1] = mag >> (64 - bit);

    uint64_t carry = 0;
    for (int i = 0; i < DN_WIDE_LIMBS; i++) {
        uint64_t a = w->limb[i];
        if (v >= 0) {
            uint64_t s = a + t[i];
            uint64_t c1 = s < a;
            uint64_t s2 = s + carry;
            carry = c1 | (s2 < s);
            w->limb[i] = s2;
        } else {
            uint64_t d = a - t[i];
            uint64_t b1 = a < t[i];
            uint64_t d2 = d - carry;
            carry = b1 | (d < carry);
            w->limb[i] = d2;
        }
    }
}

static int wide_bit(const uint64_t *m, int i) { return (int)((m[i / 64] >> (i % 64)) & 1u); }

/* Whether any bit of m below position i (exclusive) is set. */
static int wide_any_below(const uint64_t *m, int i)
{
    for (int k = 0; k < DN_WIDE_LIMBS; k++) {
        int lo = k * 64;
        if (lo >= i) break;
        uint64_t mask = i - lo >= 64 ? UINT64_MAX : (UINT64_C(1) << (i - lo)) - 1;
        if (m[k] & mask) return 1;
    }
    return 0;
}

float dn_wide_to_f32(const dn_wide *w, int64_t e)
{
    uint64_t m[DN_WIDE_LIMBS];
    int neg = (int)(w->limb[DN_WIDE_LIMBS - 1] >> 63);
    /* magnitude */
    uint64_t carry = 1;
    for (int i = 0; i < DN_WIDE_LIMBS; i++) {
        m[i] = neg ? ~w->limb[i] + carry : w->limb[i];
        if (neg) carry = carry && m[i] == 0;
    }
    int top = -1;
    for (int i = DN_WIDE_LIMBS * 64 - 1; i >= 0; i--)
        if (wide_bit(m, i)) {
            top = i;
            break;
        }
    if (top < 0) return 0.0f;

    uint32_t sign = neg ? DN_SIGN_BIT : 0;
    /* The value is m * 2^e with its leading one at 2^(top + e). Keep 24 bits,
       or fewer where the result falls on the denormal grid (least place 2^-149). */
    int64_t lsb = (int64_t)top + e - 23;
    if (lsb < -149) lsb = -149;
    if (lsb > 127) return dn_from_bits(sign | DN_EXP_BITS); /* even 1.0 * 2^(top+e) overflows */
    int64_t drop = lsb - e; /* bits of m below the kept least place */
    uint64_t q;
    if (drop <= 0) {
        q = 0;
        for (int i = top; i >= 0; i--) q = (q << 1) | (uint64_t)wide_bit(m, i);
        q <<= -drop;
    } else {
        q = 0;
        for (int64_t i = top; i >= drop; i--) q = (q << 1) | (uint64_t)wide_bit(m, (int)i);
        int half = drop - 1 <= top ? wide_bit(m, (int)(drop - 1)) : 0;
        int sticky = wide_any_below(m, (int)(drop - 1 > 256 ? 256 : drop - 1));
        if (half && (sticky || (q & 1))) q++;
    }
    if (q == (UINT64_C(1) << 24)) {
        q >>= 1;
        lsb++;
    }
    if (q < (UINT64_C(1) << 23)) return dn_from_bits(sign); /* denormal: FTZ */
    int64_t biased = lsb + 23 + 127;
    if (biased >= 0xFF) return dn_from_bits(sign | DN_EXP_BITS);
    return dn_from_bits(sign | ((uint32_t)biased << 23) | ((uint32_t)q & DN_FRAC_BITS));
}
