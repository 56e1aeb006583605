from oneiros.cli import main

main()
