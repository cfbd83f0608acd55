"""A real SMTP server (aiosmtpd) for crates/cli/tests/email.rs.

    python smtp_sink.py PORT DIR REFUSE

listens on 127.0.0.1:PORT, answers the first REFUSE messages with
"451 4.3.0 try again later" (a server that refuses at first), and writes every other
message to DIR as N.json: its headers, its MIME parts (type and decoded text) and its
envelope. Prints "listening" once it accepts connections; stops when stdin closes (the
test that started it ended).
"""

import json
import os
import sys
from email import message_from_bytes, policy

from aiosmtpd.controller import Controller


class Sink:
    def __init__(self, folder, refuse):
        self.folder = folder
        self.refuse = refuse
        self.count = 0

    async def handle_DATA(self, server, session, envelope):
        if self.refuse > 0:
            self.refuse -= 1
            with open(os.path.join(self.folder, "refused"), "a") as f:
                f.write("451\n")
            return "451 4.3.0 try again later"
        message = message_from_bytes(envelope.content, policy=policy.default)
        parts = []
        for part in message.walk():
            if part.is_multipart():
                continue
            parts.append({"type": part.get_content_type(), "body": part.get_content()})
        record = {
            "mailFrom": envelope.mail_from,
            "rcptTos": envelope.rcpt_tos,
            "headers": {k: str(v) for k, v in message.items()},
            "contentType": message.get_content_type(),
            "parts": parts,
        }
        self.count += 1
        path = os.path.join(self.folder, f"{self.count}.json")
        with open(path + ".tmp", "w") as f:
            json.dump(record, f)
        os.rename(path + ".tmp", path)
        return "250 OK"


def main():
    port, folder, refuse = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    controller = Controller(Sink(folder, refuse), hostname="127.0.0.1", port=port)
    controller.start()
    print("listening", flush=True)
    sys.stdin.read()
    controller.stop()


if __name__ == "__main__":
    main()
