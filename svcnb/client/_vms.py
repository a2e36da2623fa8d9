"""VMs: list, get, stop (optionally waiting), and the bulk pulls ``pull`` and ``all``."""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable, Iterable

from svcnb.client._config import DEFAULT_WORKERS
from svcnb.client._paging import read_all
from svcnb.client._progressive import Pull, start_pull
from svcnb.client._records import RecordParser
from svcnb.client._request import Requester
from svcnb.client._resources import _Resource, segment
from svcnb.errors import SvcnbError, WaitTimeout
from svcnb.vocab import current as vocabulary

STOP_POLL_FIRST_SECONDS = 0.5
STOP_POLL_MAX_SECONDS = 5.0


class VMs(_Resource):
    def __init__(
        self, requester: Requester, records: RecordParser, progress: Callable[[], bool]
    ) -> None:
        super().__init__(requester, records)
        self._progress = progress

    def list(self) -> list[dict]:
        """Every VM of the list endpoint (all pages), as it gives them: summaries without
        sshKeys, firewalls and privateNetworks on most servers, full VMs on some; ``updatedAt``
        may be missing."""
        rows = read_all(self._req, "/vms", "vm", scope="vms:read")
        return rows.like(self._records.many("vm", rows))

    def get(self, vm_id: str) -> dict:
        """The full VM object, with ``sshKeys``, ``firewalls`` and ``privateNetworks``."""
        return self._one("GET", f"/vms/{segment('vm_id', vm_id)}", "vm", "vms:read")

    def stop(self, vm_id: str, wait: bool = False, timeout: float = 120.0) -> str:
        """Queue a graceful stop; returns the action id.

        With ``wait=True`` it polls the VM until its status word is in the ``stopped`` class of
        :mod:`svcnb.vocab` (``stopped``, ``off``, ``halted``...). It raises ``WaitTimeout`` (a
        ``TimeoutError``) after ``timeout`` seconds (the action may still complete later), naming
        the status word seen; and ``SvcnbError`` at once when the VM turns out ``terminated`` or
        ``suspended``, as it will then never stop. A word the vocabulary does not know is not
        taken for stopped.
        A stop whose answer is lost is retried with the same Idempotency-Key, so it queues one
        action only.
        """
        if timeout is None or timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
        path = f"/vms/{segment('vm_id', vm_id)}/stop"
        reply = self._req.request("POST", path, scope="vms:write")
        action_id = str(self._records.one("action", reply.data)["actionId"])
        if wait:
            self._wait_stopped(vm_id, action_id, timeout)
        return action_id

    def wait_stopped(self, vm_id: str, timeout: float = 120.0, action_id: str = "?") -> None:
        """Wait for a stop queued earlier (``stop(vm_id)``) to finish: the same wait, errors
        and timeout as ``stop(wait=True)``, without sending the stop again."""
        if timeout is None or timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
        self._wait_stopped(vm_id, action_id, timeout)

    def _wait_stopped(self, vm_id: str, action_id: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        interval = STOP_POLL_FIRST_SECONDS
        while True:
            status = self.get(vm_id).get("status")
            # Asked each time: the user may map a new word while this waits.
            cls = vocabulary().classify("vm_status", status)
            if cls == "stopped":
                return
            if cls in ("terminated", "suspended"):
                raise SvcnbError(
                    f"VM {vm_id} is {status!r} (class {cls}) while waiting for it to stop "
                    f"(action {action_id}); it will not reach 'stopped', so the wait ends here"
                )
            left = deadline - time.monotonic()
            if left <= 0:
                if cls == "unknown" and status is not None:
                    hint = (
                        f"; {status!r} is not in svcnb's vocabulary: if it means stopped, map it "
                        f"with svcnb.vocab.extend(vm_status={{{status!r}: 'stopped'}}) or in "
                        "[vocabulary.vm_status] of the svcnb config file"
                    )
                else:
                    hint = (
                        ": the stop may still complete, check again later or pass a longer timeout"
                    )
                raise WaitTimeout(
                    f"VM {vm_id} did not reach 'stopped' within {timeout:g}s (action "
                    f"{action_id}, status now {status!r}, class {cls}){hint}"
                )
            time.sleep(min(interval, left))
            interval = min(interval * 2, STOP_POLL_MAX_SECONDS)

    def pull(
        self,
        details: bool = True,
        previous: Iterable[dict] | None = None,
        progress: bool | None = None,
        workers: int = DEFAULT_WORKERS,
    ) -> Pull:
        """Read the VM list now, and the details in the background: the fleet in seconds.

        Returns once every list page is read (about 10 s for 10k VMs at 600 requests per
        minute) a :class:`Pull`: ``pull.records()`` gives every VM at once (summaries until
        their details come, e.g. ``svcnb.frames.vms(pull.records())``), ``pull.progress`` how
        far the details are, ``pull.wait(timeout)`` / ``pull.done`` whether all are read,
        ``pull.result()`` what :meth:`all` returns (raising the pull's failure, if any) and
        ``pull.cancel()`` stops it. Arguments as for :meth:`all`.
        """
        if not isinstance(details, bool):
            raise ValueError(f"details must be True or False, got {details!r}")
        if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= 64:
            raise ValueError(f"workers must be an integer from 1 to 64, got {workers!r}")
        show = self._progress() if progress is None else bool(progress)
        return start_pull(
            self._req,
            self._records,
            details=details,
            previous=previous,
            progress=show,
            workers=workers,
        )

    def all(
        self,
        details: bool = True,
        previous: Iterable[dict] | None = None,
        progress: bool | None = None,
        workers: int = DEFAULT_WORKERS,
    ) -> builtins.list[dict]:
        """Every VM, pages and details fetched concurrently (threads; fine inside Jupyter).

        ``details=True`` returns full VM objects, else summaries. With ``previous`` (full VM
        dicts from an earlier pull or a snapshot) details are fetched again only for VMs whose
        ``updatedAt`` moved or that are new. Before starting it logs (and shows on the bar) how
        many requests it will send and how long that takes at the current rate limit;
        ``progress=False`` hides the ``tqdm`` bar (default: the Client's ``progress``).
        ``workers`` threads send the requests (at most that many in flight). It is
        ``pull(...).result()``: it returns when every detail is read.
        """
        pulled = self.pull(details=details, previous=previous, progress=progress, workers=workers)
        return pulled._outcome(None, stacklevel=3)
