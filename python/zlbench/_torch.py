"""torch's side of a measurement on CUDA.

Streams: ``fn`` runs on the engine's stream, made torch's current stream
through ``torch.cuda.ExternalStream`` (Triton's launches follow torch's
current stream too). Before the measurement that stream waits for the work
already queued on torch's current stream; afterwards torch's current stream
waits for the measurement.

Capture goes through torch's own graph API, because a capture torch does
not know about breaks its caching allocator and its RNG:
``torch.cuda.CUDAGraph(keep_graph=True)`` captured with ``capture_begin``
(a private memory pool, thread-local capture mode) and ``capture_end`` on
the engine's side stream; torch registers its CUDA generator with the graph
during the capture, so the captured random operators read their philox
state from the graph's own seed and offset. The capture runs under a
scratch copy of the default generator's state (``clone_state`` /
``graphsafe_set_state``): a capture that fails (a host synchronisation
invalidates it, so ``capture_end`` raises before torch marks the
generator's capture finished) would otherwise leave the real generator
in capture mode, and every later random draw would fail with "Offset
increment outside graph capture encountered unexpectedly". The raw ``cudaGraph_t`` (``raw_cuda_graph()``) goes to the
engine, which instantiates, replays and destroys its own executable; torch
keeps the graph and its pool until the measurement returns, then ``reset()``
releases them. The device's RNG state is saved before the measurement and
restored after it (the eager warm-up calls' random draws are undone).

Each capture has its own memory pool, as torch's default, but made here
(``torch.cuda.graph_pool_handle()``) so that its id is known when the
capture fails. torch releases before the fix of pytorch/pytorch#190348
("CUDAGraph releases memory after capture error") never end a failed
capture's allocation to its pool: the pool stays marked as recording, keeps
every block the capture's calls allocated, and while it is marked the
allocator defers frees process-wide. An operator that synchronises with the
host fails every capture attempt, so a FlagGems process kept 79 GiB on an
H200 (1.5 GiB after six refused captures of a 256 MiB function, measured).
After a failed capture the adapter ends the allocation to that pool and
releases it (``torch._C._cuda_endAllocateToPool``/``_cuda_releasePool``);
where torch already did (releases with the fix), ending it again is refused
and nothing more is done. The failure's traceback is cleared of its
finished frames' locals, which hold the tensors the calls made: the result
keeps the exception, and its reference cycle would keep them until a
garbage collection. ``ZL_TORCH_RELEASE_FAILED_CAPTURE=0`` leaves the pool
to torch.
"""

import os
import traceback


def _release_failed(torch, device, pool):
    """End and release a failed capture's pool (see the module's text)."""
    if os.environ.get("ZL_TORCH_RELEASE_FAILED_CAPTURE", "1") == "0":
        return
    end = getattr(torch._C, "_cuda_endAllocateToPool", None)
    release = getattr(torch._C, "_cuda_releasePool", None)
    if end is None or release is None:
        return
    try:
        end(device, pool)
    except RuntimeError:
        return  # not recording: torch ended the allocation itself
    try:
        release(device, pool)
    except RuntimeError:
        pass


class TorchAdapter:
    name = "torch"
    can_capture = True

    def __init__(self, torch, device):
        self.torch = torch
        self.device = device
        self.streams = {}
        self._ctx = None

    def _stream(self, ptr):
        s = self.streams.get(ptr)
        if s is None:
            s = self.streams[ptr] = self.torch.cuda.ExternalStream(ptr, device=self.device)
        return s

    def on_stream(self, ptr):
        return self.torch.cuda.stream(self._stream(ptr))

    def begin(self, session):
        torch = self.torch
        engine = self._stream(session.stream)
        self._dev = torch.cuda.device(self.device)
        self._dev.__enter__()
        try:
            self._caller = torch.cuda.current_stream()
            engine.wait_stream(self._caller)
            self._ctx = torch.cuda.stream(engine)
            self._ctx.__enter__()
        except BaseException:
            # end() is not called when begin() fails: leave torch's device
            # as it was.
            self._ctx = None
            self._dev.__exit__(None, None, None)
            raise

    def end(self, session):
        try:
            if self._ctx is not None:
                self._ctx.__exit__(None, None, None)
            self._ctx = None
            self._caller.wait_stream(self._stream(session.stream))
        finally:
            self._dev.__exit__(None, None, None)

    def capture(self, one, k, ptr):
        """Capture k calls on the engine's side stream; (graph, raw handle)."""
        torch = self.torch
        try:
            g = torch.cuda.CUDAGraph(keep_graph=True)
        except TypeError:
            raise RuntimeError("this torch has no CUDAGraph(keep_graph=True) (torch 2.7 or "
                               "newer hands its raw graph over)") from None
        side = self._stream(ptr)
        pool = torch.cuda.graph_pool_handle()
        gen, real = self._scratch_generator()
        try:
            with torch.cuda.stream(side):
                g.capture_begin(pool=pool, capture_error_mode="thread_local")
                failure = None
                try:
                    for _ in range(k):
                        one(ptr)
                except BaseException as exc:  # the capture must end whatever happened
                    failure = exc
                try:
                    g.capture_end()
                except BaseException as exc:
                    if failure is None:
                        failure = exc
                if failure is not None:
                    self.release(g)
                    _release_failed(torch, self._index(), pool)
                    # The traceback's finished frames hold fn's locals (the
                    # tensors its calls made); with the exception kept in
                    # the result they would live until a garbage collection.
                    traceback.clear_frames(failure.__traceback__)
                    raise failure
        finally:
            if gen is not None:
                gen.graphsafe_set_state(real)
        return g, g.raw_cuda_graph()

    def _index(self):
        torch = self.torch
        return self.device if isinstance(self.device, int) else (
            torch.device(self.device).index or 0)

    def _scratch_generator(self):
        """Put a copy of the default CUDA generator's state in place for the
        capture; (generator, its real state), or (None, None) where this
        torch lacks the calls (before 2.4)."""
        torch = self.torch
        gen = torch.cuda.default_generators[self._index()]
        if not (hasattr(gen, "graphsafe_get_state") and hasattr(gen, "clone_state")):
            return None, None
        real = gen.graphsafe_get_state()
        gen.graphsafe_set_state(gen.clone_state())
        return gen, real

    def release(self, g):
        try:
            g.reset()
        except Exception:
            pass

    def save_rng(self):
        return self.torch.cuda.get_rng_state(self.device)

    def restore_rng(self, state):
        self.torch.cuda.set_rng_state(state, self.device)


def adapter(torch, device):
    """The adapter when torch has CUDA, else None."""
    try:
        if not torch.cuda.is_available():
            return None
    except Exception:
        return None
    if os.environ.get("ZL_TORCH_RELEASE_FAILED_CAPTURE", "1") not in ("0", "1"):
        from . import _lib
        raise _lib.InvalidArgument(
            "ZL_TORCH_RELEASE_FAILED_CAPTURE must be 0 or 1, not "
            f"{os.environ['ZL_TORCH_RELEASE_FAILED_CAPTURE']!r}", _lib.EINVAL, "ZLB_EINVAL")
    return TorchAdapter(torch, device)
