#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generates src/math_tables.c: the tables and coefficients of the
transcendentals (docs/numerics.md section 8).

    python3 tools/gen_math_tables.py [OUTPUT]       (default: src/math_tables.c)

Tables are computed with mpmath at 256 bits and rounded once to binary32 (or
to the integer grid the table stores); polynomial coefficients are binary32
minimax fits made by Sollya's fpminimax (Debian's `sollya` package), run from
tools/math_coeffs.sollya. Every property the references rely on (exact
products, exact reduced arguments, the reduced-argument bounds the fits are
made on) is checked here with exact rational arithmetic before the file is
written. Rerunning the script reproduces the file byte for byte.
"""
import os
import struct
import subprocess
import sys
from fractions import Fraction

import mpmath

mpmath.mp.prec = 256
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def f32(x):
    """x (Fraction, mpf or float) rounded to the nearest binary32 (ties to even)."""
    if not isinstance(x, Fraction):
        x = frac(x)
    if x == 0:
        return 0.0
    sign = -1 if x < 0 else 1
    a = abs(x)
    e = 0
    while a >= 2:
        a /= 2
        e += 1
    while a < 1:
        a *= 2
        e -= 1
    assert -126 <= e <= 127
    m = a * 2 ** 23
    q, r = divmod(m.numerator, m.denominator)
    rem = Fraction(r, m.denominator)
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and q % 2 == 1):
        q += 1
    return sign * float(Fraction(q) * Fraction(2) ** (e - 23))


def frac(x):
    """An mpf or float as an exact Fraction."""
    if isinstance(x, float):
        return Fraction(x)
    x = mpmath.mpf(x)
    if x == 0:
        return Fraction(0)
    man, exp = x.man_exp  # man is the magnitude
    return (-1 if x < 0 else 1) * Fraction(man) * Fraction(2) ** exp


def bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def sig_bits(x):
    """Significant bits of a non-zero binary32 value."""
    m = bits(x) & 0x7FFFFF | 0x800000
    n = 24
    while m % 2 == 0:
        m //= 2
        n -= 1
    return n


def hexf(x):
    """A C hexadecimal float literal for a binary32 value."""
    if x == 0:
        return "0.0f"
    s = float(x).hex()  # e.g. 0x1.5555560000000p-2
    mant, exp = s.split("p")
    mant = mant.rstrip("0")
    if mant.endswith("."):
        mant = mant[:-1]
    return "%sp%sf" % (mant, exp)


def sollya_coefficients(bounds):
    """Runs tools/math_coeffs.sollya with the reduced-argument bounds; returns
    {name: [floats]}."""
    script = os.path.join(HERE, "math_coeffs.sollya")
    env_defs = "".join("%s = %s;\n" % (k, v) for k, v in bounds.items())
    with open(script) as f:
        body = f.read()
    out = subprocess.run(["sollya"], input=env_defs + body, capture_output=True, text=True,
                         check=True).stdout
    coeffs = {}
    for line in out.splitlines():
        line = line.strip()
        if not line.startswith("COEFF"):
            continue
        parts = line.split()
        coeffs[parts[1]] = [float.fromhex(p) for p in parts[2:]]
    return coeffs


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "src", "math_tables.c")
    ln2 = mpmath.log(2)

    # ---- exp ---------------------------------------------------------------
    exp_inv = f32(64 / ln2)                       # 64/ln2
    # C1: ln2/64 to 10 significant bits, so n*C1 is exact for |n| < 2^14.
    c1 = float(Fraction(round(frac(ln2 / 64) * 2 ** 16), 2 ** 16))
    assert sig_bits(c1) <= 10, c1
    c2 = f32(ln2 / 64 - frac(c1))
    # The reduced argument: |r| <= ln2/128 plus what the rounding of x*64/ln2
    # to binary32 can move n by (at most half an ulp of z, |z| < 2^14).
    r_max = frac(ln2 / 128) + Fraction(2) ** -10 * frac(ln2 / 64)
    exp_words = []
    for j in range(64):
        t = mpmath.power(2, mpmath.mpf(j) / 64)
        hi = f32(t)
        assert 1 <= hi < 2
        lo = int(mpmath.nint((t - mpmath.mpf(hi)) * 2 ** 32))
        assert -256 <= lo <= 255, (j, lo)
        exp_words.append(((lo & 0x1FF) << 23) | (bits(hi) & 0x7FFFFF))

    # ---- ln ----------------------------------------------------------------
    # Index j = the top seven fraction bits of m in [3/4, 3/2): j < 64 is
    # m in [1 + j/128, 1 + (j+1)/128), j >= 64 is m in [(1 + j/128)/2, (1 + (j+1)/128)/2).
    ln2_hi = float(Fraction(round(frac(ln2) * 2 ** 16), 2 ** 16))
    assert sig_bits(ln2_hi) <= 16
    ln2_lo = f32(ln2 - frac(ln2_hi))
    ln_k, ln_invc, ln_lhi, ln_llo = [], [], [], []
    s_max = Fraction(0)
    for j in range(128):
        a = 1 + Fraction(j, 128)
        b = 1 + Fraction(j + 1, 128)
        if j >= 64:
            a, b = a / 2, b / 2
        k = round(Fraction(256) / (a + b))
        invc = Fraction(k, 128)
        # s = m*invc - 1 over [a, b - ulp(m)]
        ulp = Fraction(2) ** (-24 if j >= 64 else -23)
        s_lo, s_hi = a * invc - 1, (b - ulp) * invc - 1
        bound = Fraction(2) ** (-7 if j >= 64 else -6)   # s exact below this
        assert abs(s_lo) < bound and abs(s_hi) < bound, (j, s_lo, s_hi)
        s_max = max(s_max, abs(s_lo), abs(s_hi))
        L = -mpmath.log(mpmath.mpf(k) / 128)
        lhi = float(Fraction(round(frac(L) * 2 ** 16), 2 ** 16))
        llo = f32(L - frac(lhi))
        if k != 128:
            # Fast2Sum(hi, s) needs |hi| >= |s| when E = 0
            assert abs(Fraction(lhi)) >= max(abs(s_lo), abs(s_hi)), j
        else:
            assert lhi == 0 and llo == 0
        assert k < 256 and sig_bits(float(invc)) <= 8
        ln_k.append(k)
        ln_invc.append(float(invc))
        ln_lhi.append(lhi)
        ln_llo.append(llo)

    # ---- recip and rsqrt seeds ---------------------------------------------
    recip_seed = []
    for j in range(128):
        a = 1 + Fraction(j, 128)
        b = 1 + Fraction(j + 1, 128)
        recip_seed.append(f32(Fraction(2) / (a + b)))   # least max |y*m - 1| on [a, b]
    rsqrt_seed = []
    for p in range(2):
        for i in range(64):
            a = (1 + Fraction(i, 64)) * 2 ** p
            b = (1 + Fraction(i + 1, 64)) * 2 ** p
            rsqrt_seed.append(f32(2 / (mpmath.sqrt(frac_to_mpf(a)) + mpmath.sqrt(frac_to_mpf(b)))))

    # ---- coefficients ------------------------------------------------------
    bounds = {
        "exp_r": "%d/%d" % (r_max.numerator, r_max.denominator),
        "ln_s": "%d/%d" % (s_max.numerator, s_max.denominator),
    }
    co = sollya_coefficients(bounds)
    exp_c = co["exp"]
    ln_c = co["ln"]
    assert len(exp_c) == 2 and len(ln_c) == 3

    lines = []
    w = lines.append
    w("/* Generated by tools/gen_math_tables.py; do not edit. Rerun the script to")
    w("   regenerate it (it reproduces this file byte for byte). The tables and")
    w("   coefficients of the transcendentals, docs/numerics.md section 8. */")
    w('#include "math_tables.h"')
    w("")
    w("/* exp: n = nearest(x * 64/ln2), r = (x - n*C1) - n*C2, e^r = 1 + r + c2 r^2 + c3 r^3")
    w("   (fpminimax on |r| <= %s), 2^(j/64) packed in exp_table. */" % hexf(float(r_max)))
    w("const dn_math_consts dn_math_c = {")
    w("    .exp_inv_ln2_64 = %s, /* 64/ln2 */" % hexf(exp_inv))
    w("    .exp_ln2_64_hi = %s, /* ln2/64 to 10 bits: n*C1 exact for |n| < 2^14 */" % hexf(c1))
    w("    .exp_ln2_64_lo = %s, /* ln2/64 - C1 */" % hexf(c2))
    w("    .exp_c2 = %s," % hexf(exp_c[0]))
    w("    .exp_c3 = %s," % hexf(exp_c[1]))
    w("    .ln2_hi = %s, /* ln2 to 16 bits: E*ln2_hi + L_hi exact */" % hexf(ln2_hi))
    w("    .ln2_lo = %s, /* ln2 - ln2_hi */" % hexf(ln2_lo))
    w("    .ln_a2 = %s, /* ln(1+s) = s + s^2 (a2 + a3 s + a4 s^2), fpminimax on |s| <= %s */"
      % (hexf(ln_c[0]), hexf(float(s_max))))
    w("    .ln_a3 = %s," % hexf(ln_c[1]))
    w("    .ln_a4 = %s," % hexf(ln_c[2]))
    w("};")
    w("")
    w("/* 2^(j/64), j = 0..63: bits 0-22 the fraction of T_hi = 2^(j/64) rounded to")
    w("   binary32 (exponent 0, so T_hi = 1.fraction), bits 23-31 a signed integer L")
    w("   with T_lo = L * 2^-32 the nearest such value to 2^(j/64) - T_hi. */")
    w("const uint32_t dn_exp_table[64] = {")
    for i in range(0, 64, 4):
        w("    " + " ".join("0x%08X," % v for v in exp_words[i:i + 4]))
    w("};")
    w("")
    w("/* ln, j = the top 7 fraction bits of m in [3/4, 3/2): c_j = 128/K_j with")
    w("   K_j = the integer nearest 128 / (the middle of j's interval);")
    w("   invc = K_j/128 (8 bits, so m_hi*invc is exact), L_j = ln(c_j) = lhi + llo,")
    w("   lhi a multiple of 2^-16. */")
    w("const float dn_ln_invc[128] = {")
    for i in range(0, 128, 4):
        w("    " + " ".join("%s," % hexf(v) for v in ln_invc[i:i + 4]))
    w("};")
    w("const float dn_ln_lhi[128] = {")
    for i in range(0, 128, 4):
        w("    " + " ".join("%s," % hexf(v) for v in ln_lhi[i:i + 4]))
    w("};")
    w("const float dn_ln_llo[128] = {")
    for i in range(0, 128, 4):
        w("    " + " ".join("%s," % hexf(v) for v in ln_llo[i:i + 4]))
    w("};")
    w("")
    w("/* recip seed, j = the top 7 fraction bits of m in [1, 2): 2/(a + b) for the")
    w("   interval [a, b) = [1 + j/128, 1 + (j+1)/128), the constant of least")
    w("   relative error on it, rounded to binary32. */")
    w("const float dn_recip_seed[128] = {")
    for i in range(0, 128, 4):
        w("    " + " ".join("%s," % hexf(v) for v in recip_seed[i:i + 4]))
    w("};")
    w("")
    w("/* rsqrt seed, j = 64*p + i for m in [2^p (1 + i/64), 2^p (1 + (i+1)/64)),")
    w("   p the exponent's parity: 2/(sqrt(a) + sqrt(b)), rounded to binary32. */")
    w("const float dn_rsqrt_seed[128] = {")
    for i in range(0, 128, 4):
        w("    " + " ".join("%s," % hexf(v) for v in rsqrt_seed[i:i + 4]))
    w("};")
    act_section(w, co)
    text = "\n".join(lines) + "\n"
    with open(out_path, "w") as f:
        f.write(text)


def split2(v):
    """v (mpf) as hi + lo: hi = v rounded to binary32, lo = the rest rounded."""
    hi = f32(v)
    return hi, f32(frac(v) - Fraction(hi))


def act_section(w, co):
    """tanh, gelu_tanh, gelu (docs/numerics.md section 20): appended after
    the tables above, which it leaves as they are."""
    tanh_c, gelu_c = co["tanh"], co["gelu"]
    assert len(tanh_c) == 5 and len(gelu_c) == 12
    k_hi, k_lo = split2(2 * mpmath.sqrt(2 / mpmath.pi))      # 2 sqrt(2/pi)
    a_hi, a_lo = split2(mpmath.mpf(44715) / 1000000)         # 0.044715
    # the products of hi parts with 12-bit halves must be exact: hi12 splits
    # of binary32 values always are; nothing else to check here.
    w("")
    w("/* tanh: x + x^3 (t3 + t5 x^2 + ... + t11 x^8) for |x| < 9/16 (fpminimax,")
    w("   relative); gelu_tanh: 2 sqrt(2/pi) and 0.044715 each as hi + lo; gelu:")
    w("   erfc(a/sqrt2)/2 = e^(-a^2/2) tau P(v), tau = 1/(1 + a/2), v = 1 - tau - 7/16,")
    w("   P of degree 11 on [-7/16, 27/31 - 7/16] (fpminimax, relative). */")
    w("const dn_act_consts dn_act_c = {")
    w("    .tanh_p = {%s}," % ", ".join(hexf(v) for v in tanh_c))
    w("    .gelu_k_hi = %s, /* 2 sqrt(2/pi) = k_hi + k_lo */" % hexf(k_hi))
    w("    .gelu_k_lo = %s," % hexf(k_lo))
    w("    .gelu_a_hi = %s, /* 0.044715 = a_hi + a_lo */" % hexf(a_hi))
    w("    .gelu_a_lo = %s," % hexf(a_lo))
    w("    .gelu_p = {%s," % ", ".join(hexf(v) for v in gelu_c[:4]))
    w("               %s," % ", ".join(hexf(v) for v in gelu_c[4:8]))
    w("               %s}," % ", ".join(hexf(v) for v in gelu_c[8:]))
    w("};")


def frac_to_mpf(q):
    return mpmath.mpf(q.numerator) / q.denominator


if __name__ == "__main__":
    main()
