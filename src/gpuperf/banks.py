"""Shared-memory bank conflicts: how many passes one warp's shared-memory access takes.

Shared memory is split into 32 banks, 4 bytes wide: successive 32-bit words map to successive
banks, and each bank serves one 32-bit word per clock (CUDA C++ Programming Guide, shared
memory; Best Practices Guide, "Shared Memory and Memory Banks"). A warp's access whose lanes
ask one bank for *different* words is split into as many passes (wavefronts) as the busiest
bank has distinct words — an n-way conflict costs n passes; lanes asking for the *same* word
are served by one broadcast and do not conflict.

Why it matters next to coalescing: a tiled transpose reads its tile from shared memory along
the other axis. With a 32-word row pitch every element of a column sits in the same bank, so
the column read is a 32-way conflict; padding each row by one word (pitch 33) or storing
element (r, c) at column ``c XOR r`` spreads a column over all 32 banks. :func:`tile_access`
counts all three. The model covers 4-byte (32-bit) accesses only: wider ones are split into
phases of a quarter or half warp first, which it does not model.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._validate import choice, flag, positive_int, power_of_two, show
from .hardware import WARP_SIZE

#: Banks of shared memory, and bytes per bank (CUDA C++ Programming Guide: "32 banks ...
#: successive 32-bit words map to successive banks"; compute capability 5.0 and later).
BANKS = 32
BANK_BYTES = 4
#: Largest tile edge :func:`tile_access` builds (a 1024 × 1024 fp32 tile is 4 MiB, far more
#: shared memory than any SM has; the bound only stops a typo from building huge lists).
MAX_TILE = 1024
#: Word indices stop here: 2²⁰ 32-bit words are 4 MiB, more shared memory than any SM has.
MAX_WORD = 2**20 - 1
#: What :func:`tile_access` reads: a column (the transpose's conflict) or a row (always clean).
AXES = ("column", "row")


@dataclass(frozen=True)
class BankAccess:
    """One warp's 4-byte shared-memory access: the word each lane reads and its bank."""

    words: tuple[int, ...]
    banks: int = BANKS

    def __post_init__(self) -> None:
        words = tuple(self.words) if isinstance(self.words, (tuple, list)) else None
        if (
            not words
            or any(
                isinstance(w, bool) or not isinstance(w, int) or not 0 <= w <= MAX_WORD
                for w in words
            )
            or len(words) > WARP_SIZE
        ):
            raise ValueError(
                f"words={show(self.words)} must be 1–{WARP_SIZE} word indices "
                f"(integers 0–{MAX_WORD}), one per active lane"
            )
        object.__setattr__(self, "words", words)
        object.__setattr__(self, "banks", power_of_two("banks", self.banks, 1, 1024))

    @property
    def bank_of_lane(self) -> tuple[int, ...]:
        return tuple(w % self.banks for w in self.words)

    @property
    def wavefronts(self) -> int:
        """Passes the access takes: the most distinct words any one bank is asked for."""
        distinct: dict[int, set[int]] = {}
        for word in self.words:
            distinct.setdefault(word % self.banks, set()).add(word)
        return max(len(ws) for ws in distinct.values())

    @property
    def ways(self) -> int:
        """The conflict degree: 1 is conflict-free, 32 is the worst a warp can do."""
        return self.wavefronts

    @property
    def efficiency(self) -> float:
        """Shared-memory bandwidth the access uses: 1 / wavefronts."""
        return 1.0 / self.wavefronts


def warp_access(words: object, banks: int = BANKS) -> BankAccess:
    """Bank conflicts of one warp reading ``words[i]`` (a 32-bit word index) in lane i."""
    return BankAccess(tuple(words) if isinstance(words, (list, tuple, range)) else words, banks)


def tile_access(
    tile: int = 32,
    pad: int = 0,
    swizzle: bool = False,
    axis: str = "column",
    index: int = 0,
) -> BankAccess:
    """One warp reading a row-major ``tile`` × ``tile`` tile of 4-byte words in shared memory.

    Element (r, c) is stored at word ``r·(tile + pad) + c``, or with ``swizzle`` at
    ``r·tile + (c XOR (r mod tile))`` (``tile`` a power of two, no padding). Lane i reads
    (i, ``index``) for ``axis="column"`` — the transpose's read — or (``index``, i) for a row.
    Column read, ``tile`` = 32: no padding → 32 ways; ``pad`` = 1 → 1; swizzle → 1.
    """
    tile = positive_int("tile", tile, WARP_SIZE, MAX_TILE)
    pad = positive_int("pad", pad, minimum=0, maximum=tile)
    swizzle = flag("swizzle", swizzle)
    axis = choice("axis", axis, AXES)
    index = positive_int("index", index, minimum=0, maximum=tile - 1)
    if swizzle:
        tile = power_of_two("tile", tile, WARP_SIZE, MAX_TILE)
        if pad:
            raise ValueError(f"pad={pad} with swizzle=True: a swizzled tile needs no padding")
    lanes = range(WARP_SIZE)
    cells = (
        [(lane, index) for lane in lanes]
        if axis == "column"
        else [(index, lane) for lane in lanes]
    )
    if swizzle:
        words = [r * tile + (c ^ (r % tile)) for r, c in cells]
    else:
        words = [r * (tile + pad) + c for r, c in cells]
    return BankAccess(tuple(words))


def padded_tile_bytes(tile: int = 32, pad: int = 0, element_bytes: int = BANK_BYTES) -> int:
    """Shared memory a ``tile`` × ``tile`` tile takes with ``pad`` extra elements per row."""
    tile = positive_int("tile", tile, 1, MAX_TILE)
    pad = positive_int("pad", pad, minimum=0, maximum=tile)
    element_bytes = choice("element_bytes", element_bytes, (1, 2, 4, 8, 16))
    return tile * (tile + pad) * element_bytes


__all__ = [
    "AXES",
    "BANKS",
    "BANK_BYTES",
    "MAX_TILE",
    "MAX_WORD",
    "BankAccess",
    "padded_tile_bytes",
    "tile_access",
    "warp_access",
]
