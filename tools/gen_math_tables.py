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
    exp_factors = exp_factor_tables(exp_words)

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
    trig_r = trig_bound()
    bounds["trig_r"] = "%d/%d" % (trig_r.numerator, trig_r.denominator)
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
    w("/* 2^(j/64) = 2^(j1/8) 2^(j0/64), j = 8 j1 + j0: rows 2^(i/8) hi, lo, 2^(i/64)")
    w("   hi, lo (each factor rounded to binary32, then its rest). The AVX2 kernels")
    w("   form T_hi and T_lo from them (src/x86/math_avx2.c, exp_table); for every j")
    w("   the result equals dn_exp_table's word, which the generator checks in exact")
    w("   arithmetic. */")
    w("const float dn_exp_factors[4][8] = {")
    for row in exp_factors:
        w("    {" + ", ".join(hexf(v) for v in row[:4]) + ",")
        w("     " + ", ".join(hexf(v) for v in row[4:]) + "},")
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
    trig_tables(w, co, trig_r)
    text = "\n".join(lines) + "\n"
    with open(out_path, "w") as f:
        f.write(text)


def exp_factor_tables(exp_words):
    """The rows 2^(i/8) hi, lo and 2^(i/64) hi, lo (i = 0..7), after checking
    that math_avx2.c's exp_table() rebuilds every word of exp_words from them:
    its binary32 operations replayed exactly, each rounded by f32()."""
    rows = [[], [], [], []]
    for i in range(8):
        for r, d in ((0, 8), (2, 64)):
            t = mpmath.power(2, mpmath.mpf(i) / d)
            hi = f32(t)
            rows[r].append(hi)
            rows[r + 1].append(f32(t - mpmath.mpf(hi)))
    q = [[Fraction(v) for v in row] for row in rows]
    sh = Fraction(3, 2) * Fraction(2) ** -9
    for j in range(64):
        ah, al, bh, bl = q[0][j >> 3], q[1][j >> 3], q[2][j & 7], q[3][j & 7]
        c = Fraction(f32(ah * bl + Fraction(f32(al * bh))))   # fused multiply-add
        t_hi = Fraction(f32(ah * bh + c))                      # fused multiply-add
        rest = ah * bh - t_hi                                  # fused multiply-subtract:
        assert Fraction(f32(rest)) == rest, j                  # exact
        t_lo = Fraction(f32(Fraction(f32(Fraction(f32(rest + c)) + sh)) - sh))
        word = exp_words[j]
        want_hi = Fraction(struct.unpack("<f", struct.pack("<I", 0x3F800000 | (word & 0x7FFFFF)))[0])
        lo_int = word >> 23
        if lo_int >= 256:
            lo_int -= 512
        assert t_hi == want_hi and t_lo == Fraction(lo_int, 2 ** 32), j
    return rows


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


# ---- sin, cos (appended; the tables above are unchanged) ----------------------


def trig_bound():
    """|r| <= pi/64 for the reduced argument r = |x| - j*pi/32 (j the nearest
    integer), widened by 2^-20 for the reduction's own rounding."""
    return frac(mpmath.pi / 64) * (1 + Fraction(1, 2 ** 20))


def hi_bits(x, n):
    """x (mpf) rounded to n significant bits, as a float."""
    if x == 0:
        return 0.0
    e = int(mpmath.floor(mpmath.log(abs(x), 2)))
    q = Fraction(2) ** (e - n + 1)
    return float(Fraction(round(frac(x) / q)) * q)


def trig_tables(w, co, trig_r):
    """Appends the tables and coefficients of dn_sin / dn_cos to the output."""
    pi = mpmath.pi
    pi32 = f32(pi / 32)
    pi32_hi = hi_bits(pi / 32, 12)
    assert sig_bits(pi32_hi) <= 12
    pi32_lo = f32(pi / 32 - frac(pi32_hi))
    c_cos = co["cos"]
    c_sin = co["sin"]
    assert len(c_cos) == 2 and len(c_sin) == 2
    # sin(j*pi/32), j = 0..63: to 24 bits + rest, and to 12 bits + rest. The
    # zeros and the ones are exact (no rest), so the Fast2Sum of the
    # evaluation holds and sin(k*pi) is exactly +-0 in the table.
    s24, s24lo, s12, s12lo = [], [], [], []
    for j in range(64):
        if j % 16 == 0:
            v = [0.0, 1.0, 0.0, -1.0][j // 16]
            s24.append(v)
            s24lo.append(0.0)
            s12.append(v)
            s12lo.append(0.0)
            continue
        t = mpmath.sin(pi * j / 32)
        hi = f32(t)
        s24.append(hi)
        s24lo.append(f32(t - frac(hi)))
        h12 = hi_bits(t, 12)
        assert sig_bits(h12) <= 12
        s12.append(h12)
        s12lo.append(f32(t - frac(h12)))
        # Fast2Sum(S, C_hi * r_hi): |S| >= sin(pi/32) > pi/64 >= |C_hi * r_hi|
        assert abs(Fraction(hi)) > trig_r * (1 + Fraction(1, 2 ** 11))
    # The window of 1/pi for each biased exponent b = 64..254 (|x| >= 2^-5 uses
    # b >= 122; the RoPE tables' inverse frequencies go lower):
    # V = floor(2^q / pi) mod 2^96 with q = b - 55, as three 32-bit words, most
    # significant first, so |x| * 32/pi = M * V * 2^-90 (mod 64) for the 24-bit
    # significand M, up to M * 2^-90 (the dropped fraction of 2^q/pi).
    old = mpmath.mp.prec
    mpmath.mp.prec = 1024
    win = []
    for b in range(64, 255):
        q = b - 55
        v = int(mpmath.floor(mpmath.mpf(2) ** q / mpmath.pi)) % (1 << 96)
        win.append(((v >> 64) & 0xFFFFFFFF, (v >> 32) & 0xFFFFFFFF, v & 0xFFFFFFFF))
    mpmath.mp.prec = old
    w("")
    w("/* sin, cos: |x| = j*pi/32 + r (mod 2*pi), j an integer mod 64, |r| <= pi/64;")
    w("   cos(r) - 1 = c2 r^2 + c4 r^4 (fpminimax, absolute error) and")
    w("   sin(r) - r = s3 r^3 + s5 r^5 (fpminimax, relative error) on |r| <= %s. */"
      % hexf(float(trig_r)))
    w("const dn_trig_consts dn_trig_c = {")
    w("    .pi32 = %s, /* pi/32 rounded */" % hexf(pi32))
    w("    .pi32_hi = %s, /* pi/32 to 12 bits: a 12-bit t times it is exact */" % hexf(pi32_hi))
    w("    .pi32_lo = %s, /* pi/32 - pi32_hi rounded */" % hexf(pi32_lo))
    w("    .cos_c2 = %s," % hexf(c_cos[0]))
    w("    .cos_c4 = %s," % hexf(c_cos[1]))
    w("    .sin_s3 = %s," % hexf(c_sin[0]))
    w("    .sin_s5 = %s," % hexf(c_sin[1]))
    w("};")
    w("")
    w("/* sin(j*pi/32), j = 0..63: rounded to binary32 (s24) and the rest rounded")
    w("   (s24_lo); to 12 significant bits (s12) and the rest rounded (s12_lo).")
    w("   0, 1, 0, -1 at j = 0, 16, 32, 48 exactly. cos(j*pi/32) is entry j + 16. */")
    for name, tab in (("s24", s24), ("s24_lo", s24lo), ("s12", s12), ("s12_lo", s12lo)):
        w("const float dn_trig_%s[64] = {" % name)
        for i in range(0, 64, 4):
            w("    " + " ".join("%s," % hexf(v) for v in tab[i:i + 4]))
        w("};")
    w("")
    w("/* floor(2^(b - 55) / pi) mod 2^96 for the biased exponent b = 64..254 of |x|,")
    w("   most significant word first: |x| * 32/pi = M * V * 2^-90 (mod 64). */")
    w("const uint32_t dn_trig_invpi[191][3] = {")
    for v in win:
        w("    {0x%08X, 0x%08X, 0x%08X}," % v)
    w("};")


def frac_to_mpf(q):
    return mpmath.mpf(q.numerator) / q.denominator


if __name__ == "__main__":
    main()
