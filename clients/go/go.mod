module plimsoll.dev/client

go 1.22
