"""The server's own hardware event log: the BMC's System Event Log as ipmitool prints it (RUN600).

Formats, read at the source (ipmitool lib/ipmi_sel.c, ipmi_sel_print_std_entry: "%4x | date | time | <sensor
type> #0x<num> | <event description> | Asserted|Deasserted", and `sel elist`, which names the sensor and may
add "| Reading 95 > Threshold 93 degrees C"; FreeIPMI's ipmi-sel puts " - " before "going": "CPU1 Temp |
Temperature | Upper Critical - going high ; Sensor Reading = 95.00 C"): a paste quotes whole rows ("  1 |
04/09/2024 | 10:15:02 | Temperature #0x30 | Upper Critical going high | Asserted") or only the sensor and
the event ("Temperature sensor #0x10 | Upper Non-critical going high"). Read here:

- a threshold crossed the way that hurts, from ipmitool's generic threshold event strings: "Upper Non-critical
  / Critical / Non-recoverable going high", "Lower ... going low" (a temperature or a current too high, a
  voltage or a fan too low); the non-critical threshold is a warning (tier 1: any other failure in the paste
  is the cause), the critical and non-recoverable ones are the cause (tier 0);
- the sensor-specific events of a failed part: memory "Uncorrectable ECC", processor "IERR", "Thermal Trip",
  "Uncorrectable machine check exception", critical interrupt "PCI SERR", "PCI PERR", "Bus Uncorrectable
  error", "Bus Fatal Error", "Fatal NMI", and a power supply's or fan's "Failure detected".

Silent: a "Deasserted" row (the condition cleared), "Upper ... going low" / "Lower ... going high" (the
reading coming back), "Correctable ECC" and the log's housekeeping ("Log area reset/cleared", "System Boot
Initiated", "Power Supply AC lost" of a power cycle), `ipmitool sensor` / `sdr` tables (no event column), and
the event's words without ipmitool's "| " before them (prose, a monitoring rule's name).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

# "<sensor>[ #0xNN] | <event>[ | Asserted]": the sensor is the column before the event.
_SENSOR = r"(?P<sensor>[A-Za-z][\w .()/+-]{0,40}?)(?: #0x[0-9a-fA-F]{1,4})?\s*\|\s*"
_THRESHOLD = lazy_re.compile(
    _SENSOR + r"(?P<ev>Upper (?P<ulvl>Non-critical|Critical|Non-recoverable)(?: -)? going high|"
    r"Lower (?P<llvl>Non-critical|Critical|Non-recoverable)(?: -)? going low)\b(?P<rest>.*)$"
)
_PART_FAILED = lazy_re.compile(
    _SENSOR + r"(?P<ev>Uncorrectable ECC|IERR|Thermal Trip|Uncorrectable machine check exception|PCI SERR|"
    r"PCI PERR|Bus Uncorrectable error|Bus Fatal Error|Fatal NMI|Failure detected)\b(?P<rest>.*)$"
)
_DEASSERTED = lazy_re.compile(r"\|\s*Deasserted\b")
_READING = lazy_re.compile(r"Reading ([\d.]+) [<>] Threshold ([\d.]+) ([\w ]+?)\s*$")


def _sel_event(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if _DEASSERTED.search(m.group("rest")):
        return []  # the condition cleared: ipmitool's own row for its end
    sensor = m.group("sensor").strip()
    ev = m.group("ev")
    if ev == "Failure detected" and not re.search(r"(?i)power|psu|fan", sensor):
        return None
    facts: dict[str, Any] = {"sensor": sensor, "sel_event": ev}
    r = _READING.search(m.group("rest"))
    if r:
        facts["reading"], facts["threshold"], facts["unit"] = float(r.group(1)), float(r.group(2)), r.group(3)
    level = (m.group("ulvl") or m.group("llvl")) if "ulvl" in m.re.groupindex else None
    tier = 1 if level == "Non-critical" else 0
    return [
        row.event(
            hit,
            f"the server's management controller logged '{clip(sensor, 40)} | {ev}': a hardware event on the "
            "node itself (cooling, power or a failing part); read the whole log with `ipmitool sel elist` "
            "and drain the node until it is fixed",
            facts,
            tier=tier,
            dedupe=(row.code, sensor, ev),
        )
    ]


SIGNATURES = (
    Signature(
        "ipmi sel threshold event",
        _THRESHOLD,
        _sel_event,
        C.BMC_HARDWARE_EVENT.code,
        anchors=(b"going high", b"going low"),
        words=("going high", "going low"),
        examples=(
            "   1 | 04/09/2024 | 10:15:02 | Temperature #0x30 | Upper Critical going high | Asserted",
            "Temperature sensor #0x10 | Upper Non-critical going high",
            "  a3 | 10/08/2019 | 11:02:22 | Temperature CPU1 Temp | Upper Critical going high | Asserted | "
            "Reading 95 > Threshold 93 degrees C",
            "  2c | 01/12/2025 | 03:14:07 | Fan FAN3 | Lower Critical going low | Asserted",
            "12 | Mar-02-2025 | 22:41:10 | CPU1 Temp        | Temperature | Upper Critical - going high ; "
            "Sensor Reading = 95.00 C ; Threshold = 93.00 C",
        ),
    ),
    Signature(
        "ipmi sel failed part",
        _PART_FAILED,
        _sel_event,
        C.BMC_HARDWARE_EVENT.code,
        anchors=(
            b"Uncorrectable ECC",
            b"IERR",
            b"Thermal Trip",
            b"Uncorrectable machine check exception",
            b"PCI SERR",
            b"PCI PERR",
            b"Bus Uncorrectable error",
            b"Bus Fatal Error",
            b"Fatal NMI",
            b"Failure detected",
        ),
        words=(
            "uncorrectable ecc",
            "ierr",
            "thermal trip",
            "uncorrectable machine check exception",
            "pci serr",
            "pci perr",
            "bus uncorrectable error",
            "bus fatal error",
            "fatal nmi",
            "failure detected",
        ),
        examples=(
            "  17 | 03/02/2025 | 22:41:10 | Memory #0x87 | Uncorrectable ECC | Asserted",
            "  18 | 03/02/2025 | 22:41:11 | Critical Interrupt #0x3c | PCI SERR | Asserted",
            "   9 | 11/20/2024 | 07:05:33 | Power Supply #0x51 | Failure detected | Asserted",
        ),
    ),
)
parse = gated_reader(SIGNATURES)
