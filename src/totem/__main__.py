from totem.cli.main import main

raise SystemExit(main())
