"""``uuid_text`` cut from the drawn integer's bytes is the text of its 32 hex digits, cut.

The bytes' path (``to_bytes``, ``hex`` with a separator) must give the very digits, with
the leading zeros of each group, of the ``%032x`` text sliced into 8-4-4-4-12 groups.
"""

from __future__ import annotations

import random

import pytest

from r2act.systems.logformats import _UUID_KEEP, _UUID_SET, uuid_text


class _Fixed(random.Random):
    """A generator whose 128-bit draw is a given integer."""

    def __init__(self, value: int) -> None:
        super().__init__(0)
        self.value = value

    def getrandbits(self, k: int, /) -> int:
        assert k == 128
        return self.value


def _sliced(value: int) -> str:
    h = "%032x" % (value & _UUID_KEEP | _UUID_SET)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


EDGES = [0, 1, 2**128 - 1, 2**127, 2**96 - 1, 2**80, 2**64 - 1, 2**48 - 1, 0xF << 76, 0xC << 60]


@pytest.mark.parametrize("value", EDGES)
def test_edge_draws_give_the_sliced_text(value: int) -> None:
    assert uuid_text(_Fixed(value)) == _sliced(value)


def test_random_draws_give_the_sliced_text_and_draw_the_same() -> None:
    for seed in range(20_000):
        r, plain = random.Random(seed), random.Random(seed)
        assert uuid_text(r) == _sliced(plain.getrandbits(128))
        assert r.random() == plain.random()
