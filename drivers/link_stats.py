"""The shoe link's counters: one :class:`LinkStats` kept by the session and the transport
together (``docs/protocol.md`` section 11 for the refusals counted by row)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any


@dataclass
class LinkStats:
    """Counters of one link (a :class:`drivers.session.LinkSession` and the
    :class:`drivers.shoe.ShoeLink` that drives it) since it was created.

    :param delivered: events handed to the consumer.
    :param frames_in: valid frames received.
    :param frames_out: frames written (by the transport).
    :param bad_frames: frames dropped (COBS, length, CRC or message checks).
    :param unknown_frames: valid frames of an unknown message type (dropped).
    :param duplicates_dropped: events received again after delivery (dropped by sequence).
    :param resends: resend requests sent to the shoe (an ACK whose ``want`` reports a hole).
    :param reconnects: port connections opened after the first (by the transport).
    :param port_errors: port losses and failed opens (by the transport).
    :param gaps: :class:`~shoe_ctl.events.SequenceGap` events raised (and sequence resets).
    :param out_of_window: events too far ahead of the next expected sequence (dropped).
    :param degraded: times the link went ``degraded``.
    :param refused: frames refused by authentication or the shoe's serial
        (``LinkChanged.refused``).
    :param acks: ACK frames sent (at most one per ``drivers.link_timers.ACK_MIN_GAP``).
    :param rejected: frames dropped by a row of the constraint table (``docs/protocol.md``
        section 11), by the row's id.
    :param restarts: :class:`~shoe_ctl.events.ShoeRestarted` events raised.
    :param stale_hellos: HELLOs made with the table's secret that answer a challenge this host no
        longer holds (a replayed HOST_HELLO the shoe answered, or a replayed HELLO): no session,
        no refusal, the shoe challenged again (docs/security.md, "The shoe link").
    :param sealed_unchecked: version-2 (sealed) frames a link without a secret received: a paired
        shoe's, which it cannot check and never acts on (docs/protocol.md section 14, "A host
        without the secret").
    """

    delivered: int = 0
    frames_in: int = 0
    frames_out: int = 0
    bad_frames: int = 0
    unknown_frames: int = 0
    duplicates_dropped: int = 0
    resends: int = 0
    reconnects: int = 0
    port_errors: int = 0
    gaps: int = 0
    out_of_window: int = 0
    degraded: int = 0
    refused: int = 0
    acks: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    restarts: int = 0
    stale_hellos: int = 0
    sealed_unchecked: int = 0

    def snapshot(self) -> LinkStats:
        """A copy that later counting does not change."""
        return replace(self, rejected=dict(self.rejected))

    def as_dict(self) -> dict[str, Any]:
        """The counters as a JSON-safe dict."""
        return asdict(self)
