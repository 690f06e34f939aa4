"""``python -m gpuperf.classroom grade LAB_DIR SUBMISSIONS_DIR ...`` (see :mod:`.grade`)."""

from gpuperf.classroom.grade import main

if __name__ == "__main__":
    raise SystemExit(main())
