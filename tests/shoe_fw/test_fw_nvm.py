"""The RP2040 board's kept state (drivers/shoe_fw/rp2040.py ``NvmStore``) on a model of
CircuitPython's ``microcontroller.nvm`` on that chip (ports/raspberrypi/common-hal/nvm): one
4 KiB flash sector, where a write into bytes still erased (all 0xFF) is programmed as it is and
any other write erases the whole sector and writes it again. A save appends without an erase, so
the sector is erased once per slot count, not at every card; a power loss tears one record at
most, and the newest before it stands; the secret survives every rewrite; a board kept by the
first layout (two slots at 0 and 32) is read unchanged. docs/build-a-shoe.md, "Flashing the
RP2040"."""

from __future__ import annotations

import pytest

from drivers.shoe_fw.rp2040 import SECRET_AT, NvmStore, state_record

SECRET = bytes(range(32))


class PowerLost(Exception):
    pass


class FlashSector:
    """``microcontroller.nvm`` on an RP2040: 4096 bytes, erased (0xFF) when new; ``cut_after``:
    the power goes after that many bytes of the next write reached the flash."""

    def __init__(self, size: int = 4096) -> None:
        self.data = bytearray(b"\xff" * size)
        self.erases = 0
        self.cut_after: int | None = None

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, key: slice) -> bytearray:
        return self.data[key]

    def __setitem__(self, key: slice, value: bytes) -> None:
        start, stop, _ = key.indices(len(self.data))
        assert stop - start == len(value)
        if all(b == 0xFF for b in self.data[start:stop]):
            target, image = start, bytes(value)  # programmed in place
        else:
            self.erases += 1  # the whole sector erased, then written again from a copy
            image = bytes(self.data[:start]) + bytes(value) + bytes(self.data[stop:])
            self.data[:] = b"\xff" * len(self.data)
            target = 0
        cut, self.cut_after = self.cut_after, None
        if cut is not None:
            self.data[target:target + cut] = image[:cut]
            raise PowerLost
        self.data[target:target + len(image)] = image


def kept(n: int) -> tuple[int, int, int, int, int]:
    return (n + 1, 1, n, n % 7, n % 52)


def test_a_card_a_save_erases_the_sector_once_per_slot_count_not_at_every_save() -> None:
    flash = FlashSector()
    store = NvmStore(flash)  # type: ignore[arg-type]
    assert store.load() is None and len(store.slots) == 126
    store.save_secret(SECRET)
    for n in range(1000):
        store.save(kept(n))
        if n % 97 == 0:  # a restart reads the newest at any point
            assert NvmStore(flash).load() == kept(n)  # type: ignore[arg-type]
    # 1,000 saves: 7 full logs, each ended by one rewrite (the old layout erased at all 1,000)
    assert flash.erases == store.erases == 1000 // 126
    again = NvmStore(flash)  # type: ignore[arg-type]
    assert again.load() == kept(999) and again.load_secret() == SECRET and again.torn == 0


@pytest.mark.parametrize("cut", [1, 4, 17, 31])
def test_a_power_loss_in_an_append_loses_that_record_only(cut: int) -> None:
    flash = FlashSector()
    store = NvmStore(flash)  # type: ignore[arg-type]
    store.load()
    store.save_secret(SECRET)
    for n in range(5):
        store.save(kept(n))
    flash.cut_after = cut
    with pytest.raises(PowerLost):
        store.save(kept(5))
    after = NvmStore(flash)  # type: ignore[arg-type]
    assert after.load() == kept(4)  # the record before it, whole
    assert after.torn == (1 if cut >= 4 else 0)  # its magic reached the flash: named as torn
    after.save(kept(5))  # the next save goes on past the torn slot, without an erase
    assert NvmStore(flash).load() == kept(5) and flash.erases == 0  # type: ignore[arg-type]
    assert NvmStore(flash).load_secret() == SECRET  # type: ignore[arg-type]


def test_a_full_log_is_rewritten_with_the_secret_and_goes_on() -> None:
    flash = FlashSector(256)  # a small sector: slots 0, 32, 128, 160, 192, 224
    store = NvmStore(flash)  # type: ignore[arg-type]
    assert store.slots == [0, 32, 128, 160, 192, 224]
    store.load()
    store.save_secret(SECRET)
    for n in range(6):
        store.save(kept(n))
    assert flash.erases == 0
    store.save(kept(6))
    assert flash.erases == 1 and flash.data[32:64] == b"\xff" * 32  # the log starts again at slot 0
    assert NvmStore(flash).load() == kept(6) and NvmStore(flash).load_secret() == SECRET  # type: ignore[arg-type]
    store.save(kept(7))
    assert flash.erases == 1 and NvmStore(flash).load() == kept(7)  # type: ignore[arg-type]


def test_a_board_kept_by_the_first_layout_is_read_and_goes_on() -> None:
    """The first layout wrote generation g into slot g % 2 (offsets 0 and 32) and the secret at
    64: such a board keeps its counters and its pairing with this firmware."""
    flash = FlashSector()
    flash.data[0:32] = state_record(8, kept(40))
    flash.data[32:64] = state_record(7, kept(39))
    raw = b"SHK1" + SECRET
    from drivers.shoe_fw.codec import crc32

    flash.data[SECRET_AT:SECRET_AT + 40] = raw + crc32(raw).to_bytes(4, "big")
    store = NvmStore(flash)  # type: ignore[arg-type]
    assert store.load() == kept(40) and store.load_secret() == SECRET
    store.save(kept(41))
    assert flash.erases == 0 and NvmStore(flash).load() == kept(41)  # type: ignore[arg-type]


def test_a_store_saved_before_it_was_read_never_goes_below_a_newer_record() -> None:
    flash = FlashSector()
    first = NvmStore(flash)  # type: ignore[arg-type]
    for n in range(3):
        first.save(kept(n))
    NvmStore(flash).save(kept(3))  # type: ignore[arg-type]
    assert NvmStore(flash).load() == kept(3)  # type: ignore[arg-type]
