"""The long poll behind a room's pages (explorer.ui.follow.Waiters): a request waiting on a
room's counter is answered when the counter moves or the room is gone, and only then."""

from __future__ import annotations

import asyncio
import time

from explorer.ui import follow


def test_a_waiting_request_is_answered_when_its_counter_moves_and_not_before():
    counters = {"ROOM01": (3, 10, 0)}
    reads = []

    def read(codes):
        reads.append(list(codes))
        return {code: counters.get(code) for code in codes}

    async def scenario():
        waiters = follow.Waiters(read)
        rev = asyncio.create_task(waiters.moved("ROOM01", "rev", 3, timeout=10))
        tally = asyncio.create_task(waiters.moved("ROOM01", "tally", 10, timeout=10))
        step = asyncio.create_task(waiters.moved("ROOM01", "step", 0, timeout=10))
        await asyncio.sleep(0.5)
        assert not (rev.done() or tally.done() or step.done())  # nothing moved: all still wait
        counters["ROOM01"] = (3, 11, 0)  # an answer: the tally moves, the students' rev does not
        await asyncio.wait_for(tally, 2)
        counters["ROOM01"] = (3, 11, 1)  # the teacher steps: the step moves, rev does not
        await asyncio.wait_for(step, 2)
        await asyncio.sleep(0.3)
        assert not rev.done()
        t0 = time.monotonic()
        counters["ROOM01"] = (4, 11, 1)  # a question
        await asyncio.wait_for(rev, 2)
        answered = time.monotonic() - t0
        assert waiters.waiting == {}
        return answered

    answered = asyncio.run(scenario())
    assert answered < 1.0 and reads  # answered by the next check, not by a timeout
    assert all(codes == ["ROOM01"] for codes in reads)


def test_a_gone_room_ends_the_wait_and_a_quiet_room_times_out():
    async def scenario():
        gone = follow.Waiters(lambda codes: {code: None for code in codes})
        await asyncio.wait_for(gone.moved("ROOM02", "rev", 1, timeout=10), 2)
        quiet = follow.Waiters(lambda codes: {code: (1, 1, 1) for code in codes})
        t0 = time.monotonic()
        await quiet.moved("ROOM03", "rev", 1, timeout=0.4)
        return time.monotonic() - t0, quiet.waiting

    waited, left = asyncio.run(scenario())
    assert waited >= 0.39 and left == {}


class _Request:
    """What ``/room-rev`` reads of a request: its ASGI ``receive``, which gives the request (a GET,
    no body) and then, once the browser drops the connection, ``http.disconnect``."""

    def __init__(self) -> None:
        self.left = asyncio.Event()

    async def receive(self) -> dict:
        if not hasattr(self, "read"):
            self.read = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await self.left.wait()
        return {"type": "http.disconnect"}


def test_a_held_request_whose_page_left_is_let_go_at_once_and_leaves_no_waiter():
    from explorer.ui.startup import _unless_gone

    async def scenario():
        waiters = follow.Waiters(lambda codes: {code: (5, 0) for code in codes})  # a room that does not move
        left, stays = _Request(), _Request()
        held = asyncio.create_task(_unless_gone(left, waiters.moved("ROOM04", "rev", 5, timeout=30)))
        await asyncio.sleep(0.3)
        assert not held.done() and len(waiters.waiting["ROOM04"]) == 1  # held: nothing moved
        left.left.set()  # the page navigated away or its tab closed
        answered = await asyncio.wait_for(held, 2)  # at once, not after the 30 s hold
        assert waiters.waiting == {}  # its place in the room's wait list is given up
        # a page that stays gets its answer when the room moves, as before
        moving = follow.Waiters(lambda codes: {code: None for code in codes})  # the room is gone
        return answered, await asyncio.wait_for(_unless_gone(stays, moving.moved("ROOM05", "rev", 5, timeout=30)), 2)

    assert asyncio.run(scenario()) == (False, True)
