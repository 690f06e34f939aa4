"""The shared-memory bank model against hand derivations (32 banks × 4 bytes).

Lane i of a warp reads column 0 of a row-major tile. With a row pitch of P words, lane i's word
is i·P, its bank (i·P) mod 32. By hand: P = 32 → every lane in bank 0, 32 distinct words → 32
passes; P = 33 → bank i, all distinct → 1 pass; P = 34 → banks 0, 2, …, 30, two words each → 2
passes; P = 64 → bank 0 again → 32. Swizzled (word r·32 + (c XOR r)): lane i's bank is 0 XOR i
= i → 1 pass. CUDA C++ Programming Guide and Best Practices Guide; NVIDIA's transpose post pads
its 32 × 32 tile to 32 × 33 for exactly this reason.
"""

from __future__ import annotations

import pytest

from gpuperf import banks


@pytest.mark.parametrize(
    ("tile", "pad", "ways"),
    [
        (32, 0, 32),
        (32, 1, 1),
        (32, 2, 2),
        (32, 4, 4),
        (32, 8, 8),
        (32, 16, 16),
        (64, 0, 32),
        (64, 1, 1),
        (48, 0, 16),
    ],
)
def test_column_read_ways_match_the_hand_derivation(tile, pad, ways):
    # By hand: lane i's bank is i·P mod 32, which takes 32 / gcd(P, 32) values, each for
    # gcd(P, 32) lanes with distinct words: gcd(P, 32) ways (P = 48: banks 0 and 16, 16 each).
    from math import gcd

    assert gcd(tile + pad, 32) == ways
    access = banks.tile_access(tile, pad, axis="column")
    assert access.wavefronts == access.ways == ways
    assert access.efficiency == pytest.approx(1 / ways)


def test_the_three_transpose_layouts():
    plain = banks.tile_access(32, 0)
    padded = banks.tile_access(32, 1)
    swizzled = banks.tile_access(32, swizzle=True)
    assert plain.bank_of_lane == (0,) * 32
    assert padded.bank_of_lane == tuple(range(32))
    assert swizzled.bank_of_lane == tuple(range(32))
    assert (plain.ways, padded.ways, swizzled.ways) == (32, 1, 1)
    # every column, not just column 0, and rows are always clean
    for c in range(32):
        assert banks.tile_access(32, 1, index=c).ways == 1
        assert banks.tile_access(32, swizzle=True, index=c).ways == 1
        assert banks.tile_access(32, 0, index=c).ways == 32
        assert banks.tile_access(32, 0, axis="row", index=c).ways == 1
        assert banks.tile_access(32, swizzle=True, axis="row", index=c).ways == 1


def test_swizzle_keeps_every_element_once():
    tile = 32
    words = {r * tile + (c ^ r) for r in range(tile) for c in range(tile)}
    assert words == set(range(tile * tile))  # a permutation: no padding, nothing lost


def test_broadcast_is_not_a_conflict():
    assert banks.warp_access([5] * 32).ways == 1  # one word, every lane: a broadcast
    assert banks.warp_access([0, 32] * 16).ways == 2  # two words in bank 0
    assert banks.warp_access(range(32)).ways == 1


def test_padding_costs_one_word_per_row():
    assert banks.padded_tile_bytes(32, 0) == 32 * 32 * 4 == 4096
    assert banks.padded_tile_bytes(32, 1) == 32 * 33 * 4 == 4224


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: banks.tile_access(16), "tile=16"),
        (lambda: banks.tile_access(48, swizzle=True), "tile=48 must be a power of two"),
        (lambda: banks.tile_access(32, 1, swizzle=True), "pad=1 with swizzle=True"),
        (lambda: banks.tile_access(32, 33), "pad=33"),
        (lambda: banks.tile_access(32, axis="diagonal"), "axis='diagonal'"),
        (lambda: banks.tile_access(32, index=32), "index=32"),
        (lambda: banks.warp_access([]), "words=()"),
        (lambda: banks.warp_access(list(range(33))), "1–32 word indices"),
        (lambda: banks.warp_access([-1]), "integers 0–1048575"),
        (lambda: banks.padded_tile_bytes(32, 0, 3), "element_bytes=3"),
        (lambda: banks.warp_access([2**20]), "integers 0–1048575"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()
