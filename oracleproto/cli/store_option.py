"""The ``--from-store URL`` option shared by ``verify``, ``replay`` and ``bundle import``.

Its own module so that those commands do not import the store client until the option is used.
It is eager so that a RUN argument (``cli/runref.py``) knows, wherever the option stands on the
command line, to leave its text to the store client.
"""

from __future__ import annotations

import click

from_store_option = click.option(
    "--from-store",
    metavar="URL",
    default=None,
    is_eager=True,
    help="Read the run from this cassette store (s3://BUCKET/PREFIX or file:///FOLDER); the argument is "
    "then a run id, an index digest or an index file, served through the verified local cache.",
)
