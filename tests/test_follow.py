"""The long poll behind a room's pages (explorer.ui.follow.Waiters): a request waiting on a
room's counter is answered when the counter moves or the room is gone, and only then."""

from __future__ import annotations

import asyncio
import time

from explorer.ui import follow


def test_a_waiting_request_is_answered_when_its_counter_moves_and_not_before():
    counters = {"ROOM01": (3, 10)}
    reads = []

    def read(codes):
        reads.append(list(codes))
        return {code: counters.get(code) for code in codes}

    async def scenario():
        waiters = follow.Waiters(read)
        rev = asyncio.create_task(waiters.moved("ROOM01", "rev", 3, timeout=10))
        tally = asyncio.create_task(waiters.moved("ROOM01", "tally", 10, timeout=10))
        await asyncio.sleep(0.5)
        assert not rev.done() and not tally.done()  # nothing moved: both still wait
        counters["ROOM01"] = (3, 11)  # an answer: the tally moves, the students' rev does not
        await asyncio.wait_for(tally, 2)
        await asyncio.sleep(0.3)
        assert not rev.done()
        t0 = time.monotonic()
        counters["ROOM01"] = (4, 11)  # the teacher steps
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
        quiet = follow.Waiters(lambda codes: {code: (1, 1) for code in codes})
        t0 = time.monotonic()
        await quiet.moved("ROOM03", "rev", 1, timeout=0.4)
        return time.monotonic() - t0, quiet.waiting

    waited, left = asyncio.run(scenario())
    assert waited >= 0.39 and left == {}
