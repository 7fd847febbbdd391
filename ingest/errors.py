"""The one exception type for problems a user can fix."""


class InputError(Exception):
    """Bad user input. The message names the file, the line and the fix."""

    def __init__(self, path, message: str, fix: str, line: int | None = None, field: str | None = None):
        self.path, self.line, self.field, self.fix = str(path), line, field, fix
        where = self.path + (f":{line}" if line else "")
        what = f"{field}: {message}" if field else message
        super().__init__(f"{where}: {what}. Fix: {fix}")
