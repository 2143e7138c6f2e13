from nbcli.cli import main

main()
