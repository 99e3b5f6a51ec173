// Times in words, as agentos/_ui/durations.py and the terminal UI say them.
"use strict";

Object.assign(agentos, (() => {
  function duration(seconds) { // "0.4 s", "12 s", "1 min 40 s", "2 h 5 min", "3 d 4 h"
    if (seconds < 9.95) return `${Math.max(0, seconds).toFixed(1)} s`;
    const two = (big, small, bigUnit, smallUnit) => small ? `${big} ${bigUnit} ${small} ${smallUnit}` : `${big} ${bigUnit}`;
    const whole = Math.round(seconds);
    if (whole < 60) return `${whole} s`;
    if (whole < 3600) return two(Math.floor(whole / 60), whole % 60, "min", "s");
    const minutes = Math.round(whole / 60);
    if (minutes < 24 * 60) return two(Math.floor(minutes / 60), minutes % 60, "h", "min");
    const hours = Math.round(whole / 3600);
    return two(Math.floor(hours / 24), hours % 24, "d", "h");
  }

  function about(seconds) { // an estimate, rounded as one is said: "about 8 s", "about 2 min"
    const steps = [[10, 1], [60, 5], [600, 10], [3600, 60]];
    const step = (steps.find(([below]) => seconds < below) || [0, 300])[1];
    const rounded = Math.max(step, Math.round(seconds / step) * step);
    return rounded < 10 ? `about ${rounded} s` : `about ${duration(rounded)}`;
  }

  function elapsed(c, seconds) { // the row's clock: "12 s", "1 min 40 s of about 2 min"
    const expected = c.expected_seconds ? ` of ${about(c.expected_seconds)}` : "";
    return `${duration(seconds)}${expected}`;
  }

  // The details' clock, as the terminal UI's says it: "running for 12 s · expected 2 min ·
  // about 1 min 50 s left" (by the call's pace when it reports a percent, else the estimate).
  function timing(c, seconds, forgotten = false) {
    const expected = c.expected_seconds;
    const parts = [];
    if (c.status === "orphaned") parts.push("not known: the call was lost when the process running it stopped");
    else if (seconds === null || seconds === undefined) {
      parts.push(forgotten ? "not known: the runtime no longer holds this call" :
                 c.final ? "never started" : "not started yet");
    } else parts.push(`${c.final ? "ran" : "running"} for ${duration(seconds)}`);
    if (expected) parts.push(`expected ${duration(expected)}`);
    if (!c.final && seconds !== null && seconds !== undefined) parts.push(left(seconds, c.percent, expected));
    return parts.filter(Boolean).join(" · ");
  }

  function left(seconds, percent, expected) { // what is left of a running call, if anything says
    if (typeof percent === "number" && percent > 0 && percent < 100 && seconds > 0) {
      return `${about(seconds * (100 - percent) / percent)} left at this pace`;
    }
    if (!expected) return "";
    return seconds <= expected ? `${about(expected - seconds)} left` : `${duration(seconds - expected)} past the estimate`;
  }

  return { duration, about, elapsed, timing, left };
})());
