"""Which server streams can be resumed, and how.

Resuming is a property of a method's contract, not of the wire: ``Moderation.Subscribe``
promises that a subscription started with ``after_seq = N`` replays every matching action after
seq N and then continues live, without gap or duplicate (docs/SERVICE.md, "Events"). A stream of
such a method can therefore be resumed after a disconnect from the seq of the last message the
caller received. The table below names those methods; a stream of any other method simply ends
with its error.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, Optional, Tuple

from google.protobuf.message import Message


@dataclasses.dataclass(frozen=True)
class SeqResume:
    """Resume by log position.

    An event carries its seq at ``seq_path`` (the first name is a message field that only events
    set); the request names where to start in a field of a oneof (``start_field``; unset = live
    from now). A server may open the stream with a message that says the subscription is live
    (``started_field``, holding the ``after_seq`` after which delivery begins) instead of an
    event; a client whose proto predates that field sees a message with no event in it.
    """

    start_field: str
    seq_path: Tuple[str, ...]
    started_field: str

    def applies_to(self, response_type: type) -> bool:
        """Whether responses of ``response_type`` carry the event field this policy reads."""
        return isinstance(response_type, type) and issubclass(response_type, Message) \
            and self.seq_path[0] in response_type.DESCRIPTOR.fields_by_name

    def seq_of(self, message: Message) -> Optional[int]:
        """The seq of the event in ``message``; None when it carries no event."""
        if not message.HasField(self.seq_path[0]):
            return None
        value: object = message
        for name in self.seq_path:
            value = getattr(value, name)
        assert isinstance(value, int)
        return value

    def started_of(self, message: Message) -> Optional[int]:
        """The ``after_seq`` of a message that says the subscription is live; None for others
        (and always for a proto that has no such message)."""
        if self.started_field not in message.DESCRIPTOR.fields_by_name or not message.HasField(self.started_field):
            return None
        value = getattr(message, self.started_field).after_seq
        assert isinstance(value, int)
        return value

    def start_of(self, request: Message) -> Optional[int]:
        """Where ``request`` starts (None: live from now)."""
        if request.HasField(self.start_field):
            value = getattr(request, self.start_field)
            assert isinstance(value, int)
            return value
        return None

    def resumed(self, request: Message, after: int) -> Message:
        """A copy of ``request`` that starts after seq ``after``."""
        copy = type(request)()
        copy.CopyFrom(request)
        setattr(copy, self.start_field, after)
        return copy


#: Resumable server streams by path.
RESUMABLE_STREAMS: Dict[str, SeqResume] = {
    "/moderation.v1.Moderation/Subscribe": SeqResume(start_field="after_seq", seq_path=("action", "seq"),
                                                     started_field="started"),
}
