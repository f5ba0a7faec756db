"""vcctl and its companions (vsub, vjobs, vqueues, vcancel, vsuspend, vresume): Volcano's
command-line tools, with upstream's verbs, flags, tables and messages (docs/vcctl.md).

It sits in the ``cli`` layer and talks to the API server through ``runtime.apiclient``, the
client of the live processes.
"""
