from screener.cli import main

main()
