"""Abstraction: instance details become typed placeholders so a memory generalises.

"valgrind on server-01 at commit a1b2c3d found a leak" is stored as "valgrind on
<HOST> at commit <SHA> found a leak", and comes back for the next leak on another
host at another commit. What makes text findable stays: Java packages and classes
(``org.apache.hadoop.fs.FileSystem``), ``Foo.java:57``, versions (``2.9.2``), short
numbers, error codes (``ORA-04031``, ``HTTP 413``, ``exit 137``, ``0xc0000005``).

Host names are recognised by context, never by shape alone, because a dotted
lowercase word is far more often code than a machine:

* the authority of a URL (``scheme://user@host:port``), ``user@host`` (shell prompts,
  ssh and git remotes) and e-mail addresses;
* a value given to a host key (``host=``, ``hostname:``, ``--host``, ``DB_HOST=``,
  ``Host:``), the target of ssh/scp/rsync/ping/dig/nc, the node name in ``uname -a``;
* a numbered name after a host word (``on server-01``, ``node worker-3``);
* a bare fully qualified name whose last label is a real top-level domain that is
  not also a file extension or a common attribute (``.com``, ``.org``, ``.internal``;
  not ``.py``, ``.md``, ``.info``), whose first label is not a reverse-DNS root
  (``org.apache…``, ``java.io``, ``com.example.App`` are code), written in lower case.

``localhost`` is the same on every machine, so it stays; its port does not.

Numbers: six digits or more become ``<NUM>`` (ids, sizes, epoch times), unless they
are part of a word, a version, an issue reference (``#123456``) or follow an error
context (``exit code 3221225477``). Process ids are usually four or five digits and
cannot be told from a line number or a port by shape, so they are abstracted only
where the context says they are pids: ``pid 4242``, ``kill -9 4242``, ``pmap -x
4242``, ``strace -p 4242``, ``/proc/4242/``.

Placeholders: ``<HOST>``, ``<IP>`` (v4 and v6), ``<PORT>``, ``<EMAIL>``, ``<MAC>``,
``<UUID>``, ``<SHA>`` (hex digests of 7+ characters with a digit and a letter),
``<ADDR>`` (``0x`` and 9+ hex digits: a memory address; 8 digits stay, they are
status codes), ``<HOME>`` (``/home/<user>``, ``/Users/<user>``, ``/root``,
``C:\\Users\\<user>``: what follows is kept), ``<TMP>`` (``/tmp``, ``/var/folders/…/T``,
``%TEMP%``: random directories right under it are dropped, the stable tail kept),
``<TIMESTAMP>`` (ISO, SQL, syslog, ``date``, RFC 2822, common log format, Java
logging), ``<NUM>`` and ``<PID>``. ``details`` keeps the originals, for facts.

Placeholders are idempotent: abstracting an abstracted text changes nothing.
"""

from __future__ import annotations

from metisgraph.ingest.sanitize import addresses, hosts, numbers, paths, times
from metisgraph.ingest.sanitize.passes import PassChain, PassGroup, TextPass
from metisgraph.ingest.sanitize.placeholders import (
    PLACEHOLDER,
    PLACEHOLDER_KINDS,
    WORDLIKE,
    WORDLIKE_PLACEHOLDER,
    Abstracted,
    Details,
    placeholder,
    wordlike,
)
from metisgraph.ingest.sanitize.redaction import redact

__all__ = ["PLACEHOLDER_KINDS", "Abstracted", "abstract", "placeholder", "sanitize"]

# The rules in the order they run. The order matters: each rule sees the placeholders the
# rules before it wrote (a host inside a URL is gone before bare names are looked for;
# a long number inside a timestamp, an address or a digest is no longer a number).
_STEPS: tuple[TextPass[Details] | PassGroup[Details], ...] = (
    addresses.URL,
    addresses.EMAIL,
    addresses.USER_AT_HOST,
    numbers.UUIDS,
    *times.TIMESTAMPS,
    addresses.MAC,
    addresses.IPV4_ADDRESS,
    addresses.IPV6_ADDRESS,
    paths.PATHS,
    *hosts.HOST_PASSES,
    addresses.PORTS,
    numbers.PS_ROWS,
    numbers.MEMORY_ADDRESSES,
    numbers.PIDS,
    numbers.DIGESTS,
    numbers.LONG_NUMBERS,
)


_CHAIN = PassChain(_STEPS)


def abstract(text: str) -> Abstracted:
    """Replace instance details (hosts, IPs, ports, SHAs, paths, times, ids) by placeholders."""
    details = Details()
    if "<" in text:
        text = PLACEHOLDER.sub(lambda m: wordlike(m.group(1)), text)
    # The leading newline gives patterns that need a delimiter before a token one at the start.
    text = _CHAIN.run("\n" + text, details)[1:]
    if WORDLIKE in text:
        text = WORDLIKE_PLACEHOLDER.sub(lambda m: placeholder(m.group(1)), text)
    return Abstracted(text=text, details=details.as_dict())


def sanitize(text: str) -> Abstracted:
    """Redact secrets, then abstract instance details: the path of every stored or embedded text."""
    redacted = redact(text)
    result = abstract(redacted.text)
    return Abstracted(text=result.text, details=result.details, redactions=redacted.kinds)
