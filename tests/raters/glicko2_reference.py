"""Glicko-2 for one player and one rating period, a plain scalar transcription of steps 2 to 8
of M. E. Glickman, "Example of the Glicko-2 system" (Boston University, 2013): the oracle of
tests/raters/test_glicko2.py and tests/calibration/test_glicko2_replay.py."""

from __future__ import annotations

import math

from lobbysim.raters.glicko2 import SCALE


def reference(
    r: float,
    rd: float,
    vol: float,
    opponents: list[tuple[float, float, float]],
    tau: float = 0.5,
) -> tuple[float, float, float, dict[str, float]]:
    """Return r', RD', sigma' and the intermediates v, delta of the paper's steps 2 to 8."""
    mu, phi = (r - 1500.0) / SCALE, rd / SCALE
    if not opponents:  # step 6 alone
        return r, SCALE * math.sqrt(phi**2 + vol**2), vol, {}
    terms = []
    for r_j, rd_j, s_j in opponents:
        mu_j, phi_j = (r_j - 1500.0) / SCALE, rd_j / SCALE
        g = 1.0 / math.sqrt(1.0 + 3.0 * phi_j**2 / math.pi**2)
        e = 1.0 / (1.0 + math.exp(-g * (mu - mu_j)))
        terms.append((g, e, s_j))
    v = 1.0 / sum(g * g * e * (1.0 - e) for g, e, _ in terms)
    delta = v * sum(g * (s - e) for g, e, s in terms)
    a = math.log(vol**2)

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta**2 - phi**2 - v - ex) / (2.0 * (phi**2 + v + ex) ** 2) - (x - a) / tau**2

    big_a = a
    if delta**2 > phi**2 + v:
        big_b = math.log(delta**2 - phi**2 - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > 0.000001:
        c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = c, f_c
    vol_new = math.exp(big_a / 2.0)
    phi_star = math.sqrt(phi**2 + vol_new**2)
    phi_new = 1.0 / math.sqrt(1.0 / phi_star**2 + 1.0 / v)
    mu_new = mu + phi_new**2 * sum(g * (s - e) for g, e, s in terms)
    return SCALE * mu_new + 1500.0, SCALE * phi_new, vol_new, {"v": v, "delta": delta}
