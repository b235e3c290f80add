// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";

/**
 * @title TestWallet
 * @notice A minimal smart-contract wallet for tests: it holds tokens, runs calls its owner sends, and
 * answers ERC-1271 for hashes its owner signed (what a Safe or a smart account does in production).
 */
contract TestWallet is IERC1271 {
    address public immutable owner;

    error TestWallet__NotOwner();
    error TestWallet__CallFailed(bytes reason);

    constructor(address owner_) {
        owner = owner_;
    }

    /// @notice Calls `to` with `data` from the wallet. Owner only.
    function execute(address to, bytes calldata data) external returns (bytes memory) {
        if (msg.sender != owner) revert TestWallet__NotOwner();
        (bool ok, bytes memory result) = to.call(data);
        if (!ok) revert TestWallet__CallFailed(result);
        return result;
    }

    /// @inheritdoc IERC1271
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        (address signer, ECDSA.RecoverError error, ) = ECDSA.tryRecover(hash, signature);
        return error == ECDSA.RecoverError.NoError && signer == owner ? IERC1271.isValidSignature.selector : bytes4(0xffffffff);
    }
}
