"""The torch adapter's handling of a failed capture, against a stand-in
torch (no GPU): the pool is ended and released only when torch left it
recording, the switch turns it off, torch releases without the private
calls are left alone, and a bad switch value is refused."""
import types

import pytest

import zlbench
from zlbench import _torch


class FakeC:
    """torch._C's two allocator calls, recording what they were asked."""

    def __init__(self, recording=True):
        self.recording = recording
        self.calls = []

    def _cuda_endAllocateToPool(self, device, pool):
        self.calls.append(("end", device, pool))
        if not self.recording:
            raise RuntimeError("endAllocatePool: not currently recording to mempool_id")
        self.recording = False

    def _cuda_releasePool(self, device, pool):
        self.calls.append(("release", device, pool))


def fake_torch(c):
    return types.SimpleNamespace(_C=c)


def test_a_recording_pool_is_ended_and_released(monkeypatch):
    monkeypatch.delenv("ZL_TORCH_RELEASE_FAILED_CAPTURE", raising=False)
    c = FakeC(recording=True)
    _torch._release_failed(fake_torch(c), 1, (0, 7))
    assert c.calls == [("end", 1, (0, 7)), ("release", 1, (0, 7))]


def test_a_pool_torch_already_ended_is_left_alone(monkeypatch):
    monkeypatch.delenv("ZL_TORCH_RELEASE_FAILED_CAPTURE", raising=False)
    c = FakeC(recording=False)
    _torch._release_failed(fake_torch(c), 0, (0, 3))
    assert c.calls == [("end", 0, (0, 3))]  # refused, so no release


def test_the_switch_turns_it_off(monkeypatch):
    monkeypatch.setenv("ZL_TORCH_RELEASE_FAILED_CAPTURE", "0")
    c = FakeC(recording=True)
    _torch._release_failed(fake_torch(c), 0, (0, 3))
    assert c.calls == []


def test_a_torch_without_the_calls_is_left_alone(monkeypatch):
    monkeypatch.delenv("ZL_TORCH_RELEASE_FAILED_CAPTURE", raising=False)
    _torch._release_failed(fake_torch(types.SimpleNamespace()), 0, (0, 3))


def test_a_bad_switch_value_is_refused(monkeypatch):
    cuda = types.SimpleNamespace(is_available=lambda: True)
    monkeypatch.setenv("ZL_TORCH_RELEASE_FAILED_CAPTURE", "yes")
    with pytest.raises(zlbench.InvalidArgument, match="ZL_TORCH_RELEASE_FAILED_CAPTURE"):
        _torch.adapter(types.SimpleNamespace(cuda=cuda), 0)
    monkeypatch.setenv("ZL_TORCH_RELEASE_FAILED_CAPTURE", "1")
    assert _torch.adapter(types.SimpleNamespace(cuda=cuda), 0) is not None
