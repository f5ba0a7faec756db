from volcano_py.cli.main import process_main

process_main()
