"""plimsoll: a client of plimsolld that believes an answer only after checking it.

>>> from plimsoll import Client
>>> with Client("http://127.0.0.1:8470") as client:          # doctest: +SKIP
...     print(client.run_javascript("console.log(6*7)").stdout_text)
42
"""

from .aio import AsyncClient, AsyncPool, AsyncSession
from .client import Client, Pool, Session
from .errors import DataLossError, PlimsollError, Reason, RefusedError
from .results import (Advice, Artifact, Broker, BrokerRoute, Describe, Display, Image,
                      ImagePackage, Record, Result, SessionEnd, SessionInfo, SessionState, Step,
                      tier_meets)

__version__ = "0.1.0"

__all__ = [
    "Client", "Session", "Pool", "AsyncClient", "AsyncSession", "AsyncPool",
    "PlimsollError", "RefusedError", "DataLossError", "Reason",
    "Result", "Step", "Artifact", "Broker", "BrokerRoute", "Advice", "Display", "Record",
    "Describe", "Image", "ImagePackage", "SessionInfo", "SessionState", "SessionEnd", "tier_meets",
    "__version__",
]
