from svcnb.cli import main

raise SystemExit(main())
