"""An upload handler that stops a request as soon as its file passes the size limit.

Django already streams large uploads to a temporary file; this makes sure a 50 GiB
upload is cut off at the limit instead of filling the disk first.
"""

from __future__ import annotations

from django.core.files.uploadhandler import FileUploadHandler, StopUpload


class SizeLimitedUpload(FileUploadHandler):
    def __init__(self, request, limit: int) -> None:
        super().__init__(request)
        self.limit = limit
        self.received = 0
        self.exceeded = False

    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        if content_length and content_length > self.limit + 64 * 1024:
            self.exceeded = True
            raise StopUpload(connection_reset=True)
        return None

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        self.received += len(raw_data)
        if self.received > self.limit:
            self.exceeded = True
            raise StopUpload(connection_reset=True)
        return raw_data

    def file_complete(self, file_size: int):
        return None
