"""Agent-framework adapters over :mod:`plimsoll.tools` (docs/integrations.md).

Each lives in its own module and needs its framework, installed by the extra of the same name:

======================  ===================================  ==============================
``plimsoll[adk]``       :mod:`plimsoll.integrations.adk`     ``PlimsollCodeExecutor``
``plimsoll[agno]``      :mod:`plimsoll.integrations.agno`    ``PlimsollTools``
``plimsoll[crewai]``    :mod:`plimsoll.integrations.crewai`  ``PlimsollRunCodeTool``
======================  ===================================  ==============================

All of them run the model's code through one :class:`plimsoll.tools.CodeRunner` and show the
model one result shape (``ran``, ``refused``, ``exit_code``, capped outputs, ``isolation``,
``record_sha256``, ...), at the floor ``container`` unless the operator passes another.
This package imports no framework itself.
"""
