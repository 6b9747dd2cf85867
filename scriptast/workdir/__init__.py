"""work_dir on disk, shared by the emit pipeline and the executor: its lock, all-or-nothing
writes (write.py) over small file operations (files.py), and its one crash journal (journal.py).
Imports scriptast.common and scriptast.errors."""
