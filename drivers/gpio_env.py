"""GPIO set-up that does not depend on the working folder, and GPIO failures named by cause.

lgpio (gpiozero's pin library on Raspberry Pi OS Bookworm) creates its notification FIFO
``.lgd-nfy*`` in the process's working folder when its Python module is imported; run from a folder
the user cannot write (``/`` under systemd, ``/opt/shoe-ctl`` for the service user) the import
fails, gpiozero falls back to other pin libraries and ends in an error that hides the cause
(upstream: gpiozero issue 1106, lg issue 22). lg reads ``LG_WD`` for that folder and changes the
process's working folder to it. :func:`prepare_gpio` gives lgpio a private folder of its own
before gpiozero loads it and puts the working folder back; :func:`describe_gpio_failure` turns a
failure into what was found and the fix. See docs/install-pi.md (step 5, ``doctor``).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
import warnings
from collections.abc import Iterator, MutableMapping, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

LG_WD = "LG_WD"
"""The environment variable lg reads for the folder of its notification FIFOs."""

_lock = threading.Lock()
_prepared = False
_installed = True
lgpio_error: BaseException | None = None
"""Why ``import lgpio`` failed in :func:`prepare_gpio` (None: it loaded, or it is not installed)."""


def _fifo_folder(env: MutableMapping[str, str]) -> str:
    base = env.get("RUNTIME_DIRECTORY") or env.get("XDG_RUNTIME_DIR")
    if not base or not os.access(base, os.W_OK | os.X_OK):
        base = None  # tempfile's own choice: $TMPDIR, /tmp (private to the unit: PrivateTmp=yes)
    folder = tempfile.mkdtemp(prefix="shoe-ctl-lgpio-", dir=base)
    atexit.register(shutil.rmtree, folder, True)
    return folder


def prepare_gpio(env: MutableMapping[str, str] | None = None) -> str | None:
    """Make GPIO work from any working folder; call before gpiozero builds a device.

    Sets ``LG_WD`` (unless already set) to a new private folder (mode 0700, under
    ``$RUNTIME_DIRECTORY``, ``$XDG_RUNTIME_DIR`` or the temporary folder; removed at exit), imports
    lgpio once if it is installed, and restores the working folder lg changed to. Idempotent.

    :param env: the environment to set ``LG_WD`` in (default ``os.environ``; lg reads the
        process environment, so another mapping is for tests only).
    :returns: the folder lg uses (``LG_WD``), or None when lgpio is not installed.
    :raises: nothing; an lgpio import failure is kept in :data:`lgpio_error` for
        :func:`describe_gpio_failure`.
    """
    global _prepared, _installed, lgpio_error
    env = os.environ if env is None else env
    with _lock:
        if not _prepared:
            _prepared = True
            if not env.get(LG_WD):
                env[LG_WD] = _fifo_folder(env)
            try:
                cwd: str | None = os.getcwd()
            except OSError:  # the working folder was removed
                cwd = None
            try:
                import lgpio  # noqa: F401  (creates the FIFO now, under LG_WD)
            except ImportError:
                _installed = False
            except Exception as exc:  # noqa: BLE001 - lgpio raises OSError, lgpio.error ...
                lgpio_error = exc
            finally:
                if cwd is not None:
                    try:
                        os.chdir(cwd)  # lg moved the whole process into LG_WD
                    except OSError:
                        pass
        return env.get(LG_WD) if _installed else None


class GpioSetupError(ValueError):
    """The GPIO pins could not be had, for a cause found by :func:`describe_gpio_failure`.

    A ValueError, so that ``shoe-ctl run`` reports it in one line like a configuration error.
    :attr:`detail` is what was found, :attr:`fix` what to do."""

    def __init__(self, detail: str, fix: str) -> None:
        super().__init__(f"GPIO: {detail}; fix: {fix}")
        self.detail = detail
        self.fix = fix


def _lgpio_fifo_problem(exc: BaseException) -> bool:
    seen: list[BaseException] = [exc] + ([lgpio_error] if lgpio_error is not None else [])
    return any(".lgd-nfy" in str(e) or "xCreatePipe" in str(e) for e in seen)


def describe_gpio_failure(exc: BaseException, service_user: str = "shoe-ctl") -> tuple[str, str]:
    """What a failure to claim GPIO pins means and how to fix it.

    :param exc: what building the LED board or the buttons raised.
    :param service_user: the user the fix names.
    :returns: ``(detail, fix)``: the lgpio FIFO cause when it is one (the folder named), no access
        to the GPIO chip, no pin library, gpiozero missing, or a pin in use / invalid
        (the exception's type named in ``detail``).
    """
    if isinstance(exc, GpioSetupError):
        return exc.detail, exc.fix
    name = type(exc).__name__
    if _lgpio_fifo_problem(exc):
        cause = lgpio_error if lgpio_error is not None else exc
        return (f"lgpio could not create its notification pipe in {os.environ.get(LG_WD) or os.getcwd()} "
                f"({cause}); gpiozero then reports {name}: {exc}",
                f"make sure {LG_WD} names a folder {service_user} can write (shoe-ctl sets it itself when "
                f"unset), or run from such a folder (the unit's WorkingDirectory=/var/lib/shoe-ctl)")
    if isinstance(exc, PermissionError):
        return (f"no access to the GPIO chip ({exc})",
                f"usermod -aG gpio {service_user}, then log in again")
    if "PinFactory" in name:  # gpiozero's BadPinFactory is also an ImportError
        return (f"{name}: {exc} (no pin library loaded, or no GPIO chip: ls /dev/gpiochip*)",
                "on a Raspberry Pi: apt install python3-lgpio, then bash scripts/setup.sh pi "
                "(its venv sees apt's packages)")
    if isinstance(exc, ImportError):
        return (f"gpiozero is missing ({exc})",
                "bash scripts/setup.sh pi (installs gpiozero into .venv, sees apt's python3-lgpio)")
    return (f"{name}: {exc}", "check [leds.pins] / [buttons.pins] against the wiring; "
            "a pin may be in use by another program or an overlay")


@contextmanager
def quiet_fallbacks() -> Iterator[list[str]]:
    """Collect gpiozero's ``PinFactoryFallback`` warnings (one per pin library it tries, for every
    device made: eight lines for the LEDs and buttons of a machine without GPIO) instead of
    printing them; yields the list their texts are added to, for :func:`named_failure`. Other
    warnings are shown as usual when the block ends."""
    tried: list[str] = []
    others: list[tuple[Any, ...]] = []

    def keep(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: TextIO | None = None, line: str | None = None) -> None:
        if category.__name__ == "PinFactoryFallback":
            tried.append(str(message).removeprefix("Falling back from "))
        else:
            others.append((message, category, filename, lineno))

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = keep
        yield tried
    for message, category, filename, lineno in others:
        warnings.warn_explicit(message, category, filename, lineno)


def named_failure(exc: BaseException, service_user: str = "shoe-ctl", tried: Sequence[str] = ()) -> BaseException:
    """``exc`` as a :class:`GpioSetupError` when lgpio failed to load in :func:`prepare_gpio` (the
    pin library's error would hide that cause) or when gpiozero tried pin libraries in vain
    (``tried``, from :func:`quiet_fallbacks`: each named with its reason), else ``exc`` itself."""
    if tried and "PinFactory" in type(exc).__name__:
        detail, fix = describe_gpio_failure(exc, service_user)
        error = GpioSetupError(f"{detail}; pin libraries tried: {'; '.join(tried)}", fix)
        error.__cause__ = exc
        return error
    if lgpio_error is None or isinstance(exc, GpioSetupError):
        return exc
    error = GpioSetupError(*describe_gpio_failure(exc, service_user))
    error.__cause__ = exc
    return error


@contextmanager
def claiming(what: str, pin_factory: object = None, service_user: str = "shoe-ctl") -> Iterator[None]:
    """Around building gpiozero devices outside the table (a reader's reset line, the bridge's
    beam): lgpio prepared first (:func:`prepare_gpio`, unless a ``pin_factory`` is given),
    gpiozero's pin-library fallbacks kept quiet, and any failure raised as one
    :class:`GpioSetupError` that names ``what`` (``"beam on GPIO 17"``), the cause and the fix
    (:func:`describe_gpio_failure`, with the libraries tried).

    :raises GpioSetupError: the devices could not be built.
    """
    if pin_factory is None:
        prepare_gpio()
    with quiet_fallbacks() as tried:
        try:
            yield
        except Exception as exc:
            detail, fix = describe_gpio_failure(named_failure(exc, service_user, tried), service_user)
            raise GpioSetupError(f"{what}: {detail}", fix) from exc


def _reset_for_tests() -> None:
    """Forget an earlier :func:`prepare_gpio` (tests only)."""
    global _prepared, _installed, lgpio_error
    with _lock:
        _prepared = False
        _installed = True
        lgpio_error = None
